package mcpwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Decode decodes one JSON-RPC message into the Go SDK's jsonrpc types, with the same
// rules as jsonrpc.DecodeMessage.
//
// Why not jsonrpc.DecodeMessage itself: measured with BenchmarkDecodeMessage, it allocates a
// fresh streaming decoder with a large buffer for every message (about 36 KiB and most of the
// client's CPU per call in BenchmarkCallTool), which at thousands of sessions makes the tool
// the bottleneck it is meant to find. encoding/json's Unmarshal into the same wire shape does
// the job in a fraction of that (see the benchmark).
func Decode(data []byte) (jsonrpc.Message, error) {
	var w struct {
		Version string          `json:"jsonrpc"`
		ID      any             `json:"id,omitempty"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   *jsonrpc.Error  `json:"error,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", w.Version, "2.0")
	}
	var raw any
	switch v := w.ID.(type) {
	case nil:
	case string:
		raw = v
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("invalid ID %s", v)
		}
		raw = f
	default:
		return nil, fmt.Errorf("invalid ID type %T", v)
	}
	id, err := jsonrpc.MakeID(raw)
	if err != nil {
		return nil, err
	}
	if w.Method != nil {
		return &jsonrpc.Request{Method: *w.Method, ID: id, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("invalid request: a response without an id")
	}
	r := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		r.Error = w.Error
	}
	return r, nil
}
