package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/mcpchaos/mcpchaos/clients/wire"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/mcpwire"
)

// Every answer is read within bounds: a body or an event over its cap, or an SSE reply of more
// events than maxReplyEvents, is a protocol violation, never a reason to read on.
const (
	maxBody        = 1 << 20
	maxEvent       = 1 << 20
	maxReplyEvents = 256
)

// reply is what one POSTed request got, read as it is.
type reply struct {
	status int
	ids    []string // SSE event ids in arrival order, consecutive repeats dropped (priming included)
	result json.RawMessage
	rpcErr *jsonrpc.Error
	// violation says why a 2xx answer is not a valid JSON-RPC reply to the request; "" when it
	// is one (or when the status was not 2xx, whose body is not judged).
	violation string
}

// cut says the answer was still coming when the wait ended (2xx, no response yet, nothing
// wrong with what came): it says nothing about the server, only that it was slow.
func (r *reply) cut() bool {
	return r.status/100 == 2 && r.result == nil && r.rpcErr == nil && r.violation == ""
}

// served says the request got a valid result: the server treated it as a live session's.
func (r *reply) served() bool { return r.status/100 == 2 && r.violation == "" && r.result != nil }

// refused says the server refused the request: a status that is not 2xx, or a JSON-RPC error.
func (r *reply) refused() bool {
	return r.status/100 != 2 || r.violation == "" && r.rpcErr != nil
}

// exchange POSTs one request as s and reads its answer: a JSON body or an SSE reply, until the
// response to it, answering any server request that comes first. It returns nil when the
// request failed in transport before any status (noted). An SSE reply cut by ctx keeps the ids
// that came before the cut.
func (in *inspector) exchange(ctx context.Context, s *wire.Session, id int, method string, params any) *reply {
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	body, _ := json.Marshal(msg)
	resp, err := s.Do(ctx, http.MethodPost, "", body)
	if err != nil {
		if ctx.Err() == nil {
			in.note("%s failed: %v", method, err)
		}
		return nil
	}
	defer resp.Body.Close()
	r := &reply{status: resp.StatusCode}
	if r.status/100 != 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return r
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "application/json":
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
		switch {
		case len(data) > maxBody:
			r.violation = fmt.Sprintf("a JSON body over %d bytes", maxBody)
		case err != nil && ctx.Err() != nil:
			// Cut by the wait, not broken by the server: no answer yet (reply.cut).
		case err != nil:
			r.violation = "the JSON body broke off: " + err.Error()
		default:
			r.result, r.rpcErr, r.violation = checkResponse(data, id)
			if r.violation != "" {
				r.violation += encoding(resp)
			}
		}
	case ct == "text/event-stream":
		in.readSSEReply(ctx, s, resp.Body, id, r)
	case r.status == http.StatusAccepted:
		r.violation = "202 Accepted with no response to a request"
	default:
		r.violation = fmt.Sprintf("a %d reply of content type %q%s: %q", r.status, ct, encoding(resp), snippet(resp.Body))
	}
	if r.violation != "" {
		in.violation("%s: %s", method, r.violation)
	}
	return r
}

// readSSEReply reads an SSE reply until the response to id, within maxReplyEvents events.
func (in *inspector) readSSEReply(ctx context.Context, s *wire.Session, body io.Reader, id int, r *reply) {
	n := 0
	for ev, err := range in.ep.Conduct().Events(body, maxEvent, "SSE reply") {
		if err != nil {
			if ctx.Err() == nil {
				r.violation = "the SSE reply broke off: " + err.Error()
			}
			return
		}
		if n++; n > maxReplyEvents {
			r.violation = fmt.Sprintf("an SSE reply of over %d events without the response", maxReplyEvents)
			return
		}
		if ev.Cursor != "" && (len(r.ids) == 0 || r.ids[len(r.ids)-1] != ev.Cursor) {
			r.ids = append(r.ids, ev.Cursor)
		}
		if ev.Data == "" {
			continue // a priming event: it only moves the cursor
		}
		if req := in.serverMessage(ctx, s, []byte(ev.Data)); req {
			continue
		}
		r.result, r.rpcErr, r.violation = checkResponse([]byte(ev.Data), id)
		return
	}
	if ctx.Err() == nil {
		r.violation = "the SSE reply ended without the response"
	}
}

// serverMessage handles a server request or notification that came on a stream, answering a
// request; it reports false when data is neither (a response, or garbage).
func (in *inspector) serverMessage(ctx context.Context, s *wire.Session, data []byte) bool {
	m, err := mcpwire.Decode(data)
	if err != nil {
		return false
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		return false
	}
	if req.IsCall() {
		in.answerServer(ctx, s, req)
	}
	return true
}

// checkResponse judges a JSON-RPC response to request id: it must be a response with that id,
// carry a result or an error but not both, and a result must be an object.
func checkResponse(data []byte, id int) (json.RawMessage, *jsonrpc.Error, string) {
	var raw struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *jsonrpc.Error  `json:"error"`
		Method  string          `json:"method"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, nil, fmt.Sprintf("not JSON-RPC (%v): %q", err, cut(data))
	}
	switch {
	case raw.JSONRPC != "2.0":
		return nil, nil, fmt.Sprintf("not JSON-RPC 2.0: %q", cut(data))
	case raw.Method != "":
		return nil, nil, fmt.Sprintf("a %s request where the response was due", raw.Method)
	case string(raw.ID) != fmt.Sprint(id):
		return nil, nil, fmt.Sprintf("a response with id %s to request %d", raw.ID, id)
	case raw.Result != nil && raw.Error != nil:
		return nil, nil, "a response with both a result and an error"
	case raw.Error != nil:
		return nil, raw.Error, ""
	case raw.Result == nil:
		return nil, nil, "a response with neither result nor error"
	case !bytes.HasPrefix(bytes.TrimSpace(raw.Result), []byte("{")):
		return nil, nil, fmt.Sprintf("a result that is not an object: %q", cut(raw.Result))
	}
	return raw.Result, nil, ""
}

// answerServer answers a server request: ping and roots/list (no roots) are served; the
// rest (sampling, elicitation, ...) get an error, since inspect advertises no capability.
func (in *inspector) answerServer(ctx context.Context, s *wire.Session, req *jsonrpc.Request) {
	in.mu.Lock()
	if in.fp.ServerRequests == nil {
		in.fp.ServerRequests = map[string]int{}
	}
	in.fp.ServerRequests[req.Method]++
	in.mu.Unlock()
	resp := &jsonrpc.Response{ID: req.ID}
	switch req.Method {
	case "ping":
		resp.Result = json.RawMessage(`{}`)
	case "roots/list":
		resp.Result = json.RawMessage(`{"roots":[]}`)
	default:
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpchaos inspect does not serve " + req.Method}
	}
	body, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, in.o.Timeout)
	defer cancel()
	if r, err := s.Do(rctx, http.MethodPost, "", body); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 64<<10))
		r.Body.Close()
	}
}

func encoding(resp *http.Response) string {
	if ce := resp.Header.Get("Content-Encoding"); ce != "" {
		return ", encoding " + ce
	}
	return ""
}

func snippet(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 80))
	return string(b)
}

func cut(b []byte) string {
	s := strings.ToValidUTF8(string(b[:min(len(b), 80)]), "?")
	if len(b) > 80 {
		s += "…"
	}
	return s
}
