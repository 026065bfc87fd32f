package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/mcpwire"
)

// Reply is what the server answered to one request.
type Reply struct {
	Status        int
	Result        json.RawMessage // the JSON-RPC result (an object), when there is one
	RPCError      *jsonrpc.Error  // the JSON-RPC error, when there is one
	Notifications int             // server messages that came before the response (SSE replies)
	Resumed       int             // times the SSE reply was resumed with GET + Last-Event-ID
	Body          string          // the start of a non-JSON-RPC body, for error reports
	// Lag is the exchange's dispatch lag: the load generator's own part of the time from the
	// send to the response headers (dispatch.go), which a latency sample of it carries too.
	Lag time.Duration
}

// WrongEra reports whether the reply says the server does not speak the request's protocol era
// (notes/protocol.md, "404 means two things now"): a 404 carrying JSON-RPC -32601 is an unknown
// method, a 2026-07-28 server's answer to a 2025 request such as initialize, not a dead
// session; a 400 that asks for the stateless revision's Mcp-Method header refuses a session
// request. A 404 without -32601 stays what the dead statuses say.
func (r *Reply) WrongEra() bool {
	if r == nil {
		return false
	}
	switch r.Status {
	case http.StatusNotFound:
		return r.RPCError != nil && r.RPCError.Code == jsonrpc.CodeMethodNotFound
	case http.StatusBadRequest:
		msg := r.Body
		if r.RPCError != nil {
			msg = r.RPCError.Message
		}
		return strings.Contains(msg, "Mcp-Method")
	}
	return false
}

// WrongEra is Reply.WrongEra for an error of Initialize or a request (a *StatusError).
func (e *StatusError) WrongEra() bool {
	return (&Reply{Status: e.Status, Body: e.Body, RPCError: e.RPC}).WrongEra()
}

// OK reports whether the request got a JSON-RPC result.
func (r *Reply) OK() bool { return r != nil && r.Status/100 == 2 && r.Result != nil }

// ToolError reports whether the reply is a tools/call result that says isError: the tool ran
// and failed, which is the tool's answer, not a failure of the transport or the session.
func (r *Reply) ToolError() bool {
	if !r.OK() {
		return false
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(r.Result, &res) == nil && res.IsError
}

// take reads a single JSON-RPC response (a JSON reply).
func (r *Reply) take(data []byte, id jsonrpc.ID) error {
	done, req, err := r.takeEvent(data, id)
	if err == nil && !done {
		what := "a notification"
		if req != nil && req.IsCall() {
			what = "a request (" + req.Method + ")"
		}
		err = &ProtocolError{Msg: "JSON reply is " + what + ", not the response to the request"}
	}
	return err
}

// takeEvent reads one message of a reply: a server message before the response (returned as
// req, for the caller to answer when it is a request), or the response itself (done). A
// response is checked as the transport requires: its id is the request's, it has a result or
// an error and not both, and a result is a JSON object.
func (r *Reply) takeEvent(data []byte, id jsonrpc.ID) (done bool, req *jsonrpc.Request, err error) {
	m, err := mcpwire.Decode(data)
	if err != nil {
		return false, nil, &ProtocolError{Msg: "undecodable JSON-RPC message: " + err.Error()}
	}
	switch m := m.(type) {
	case *jsonrpc.Request:
		r.Notifications++
		return false, m, nil
	case *jsonrpc.Response:
		if m.ID != id {
			return false, nil, &ProtocolError{Msg: fmt.Sprintf("response id %v does not match request id %v", m.ID.Raw(), id.Raw())}
		}
		return true, nil, r.takeResponse(m)
	}
	return false, nil, &ProtocolError{Msg: "unexpected JSON-RPC message"}
}

func (r *Reply) takeResponse(m *jsonrpc.Response) error {
	switch {
	case m.Error != nil && m.Result != nil:
		return &ProtocolError{Msg: "response has both a result and an error"}
	case m.Error != nil:
		var we *jsonrpc.Error
		if errors.As(m.Error, &we) {
			r.RPCError = we
		} else {
			r.RPCError = &jsonrpc.Error{Code: -32603, Message: m.Error.Error()}
		}
		return nil
	case m.Result == nil:
		return &ProtocolError{Msg: "response has neither a result nor an error"}
	}
	if t := bytes.TrimSpace(m.Result); len(t) == 0 || t[0] != '{' {
		return &ProtocolError{Msg: fmt.Sprintf("response result is %s, not a JSON object", clip(string(t), 40))}
	}
	r.Result = m.Result
	return nil
}

// clip cuts s to n bytes for an error text.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
