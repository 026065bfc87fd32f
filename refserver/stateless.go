package refserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/mcpwire"
)

// The stateless 2026-07-28 revision, beside the session family: a POST that names its method
// in the Mcp-Method header and carries no session id stands alone (no initialize, no session,
// no log, no resumption), as the Go SDK's and mcp-go's servers speak it next to 2025 clients.
// What it adds to the reference server is the listen stream (subscriptions/listen), whose
// notifications it numbers (mcpwire.NotificationSeq), so a notification a client missed
// between a drop and its re-listen is a gap in the numbers: a fact, not a guess.

// protocolStateless is the stateless revision the server speaks.
const protocolStateless = "2026-07-28"

// statelessRequest says whether a POST is of the stateless revision: the Mcp-Method header
// that revision requires, and no session id.
func statelessRequest(r *http.Request) bool {
	return r.Header.Get("Mcp-Method") != "" && r.Header.Get("Mcp-Session-Id") == ""
}

type statelessMeta struct {
	Meta struct {
		Protocol string `json:"io.modelcontextprotocol/protocolVersion"`
	} `json:"_meta"`
}

// serveStateless answers one stateless request (req nil or a notification: 202).
func (s *Server) serveStateless(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
	if req == nil || !req.IsCall() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var m statelessMeta
	if json.Unmarshal(req.Params, &m) != nil || m.Meta.Protocol != protocolStateless {
		writeRPCError(w, http.StatusBadRequest, rpcError(jsonrpc.CodeInvalidParams,
			"missing or invalid _meta field io.modelcontextprotocol/protocolVersion (this server speaks %s without a session)", protocolStateless))
		return
	}
	rp := &reply{s: s, w: w} // one JSON answer: nothing is logged, nothing can be resumed
	switch req.Method {
	case "server/discover":
		rp.respond(req.ID, map[string]any{
			"supportedVersions": append([]string{protocolStateless}, protocolVersions...),
			"capabilities":      map[string]any{"tools": map[string]any{"listChanged": true}},
			"serverInfo":        implementation{Name: ServerName, Version: ServerVersion},
		}, nil)
	case "subscriptions/listen":
		s.listen(w, r, req)
	default:
		s.answer(rp, req)
	}
}

// listeners are the open listen streams: each gets every numbered notification broadcast while
// it is open.
type listeners struct {
	mu   sync.Mutex
	set  map[chan uint64]struct{}
	seq  atomic.Uint64 // the last notification's number
	sent atomic.Int64  // notifications written to listen streams
	open atomic.Int64
}

// broadcast numbers one notification and hands it to every open listen stream. A stream that
// has not written the last 64 misses it: the gap its client sees is real.
func (l *listeners) broadcast() {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.seq.Add(1)
	for ch := range l.set {
		select {
		case ch <- n:
		default:
		}
	}
}

func (l *listeners) add() chan uint64 {
	ch := make(chan uint64, 64)
	l.mu.Lock()
	if l.set == nil {
		l.set = map[chan uint64]struct{}{}
	}
	l.set[ch] = struct{}{}
	l.mu.Unlock()
	l.open.Add(1)
	return ch
}

func (l *listeners) remove(ch chan uint64) {
	l.mu.Lock()
	delete(l.set, ch)
	l.mu.Unlock()
	l.open.Add(-1)
}

type listenParams struct {
	Notifications *struct {
		ToolsListChanged bool `json:"toolsListChanged"`
	} `json:"notifications"`
}

// listen holds a subscriptions/listen stream: the acknowledgement first, then a numbered
// notifications/tools/list_changed every NotifyInterval, until the client goes (a
// disconnect), the streams are cut (a restart: no completion), or the server closes (the
// completion result, which tells the client the end was meant).
func (s *Server) listen(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
	var p listenParams
	if json.Unmarshal(req.Params, &p) != nil || p.Notifications == nil {
		(&reply{s: s, w: w}).respond(req.ID, nil, rpcError(jsonrpc.CodeInvalidParams, "subscriptions/listen: missing required 'notifications' field"))
		return
	}
	sub := mustJSON(req.ID.Raw()) // the subscription id: the listen request's own id
	agreed := p.Notifications.ToolsListChanged
	setSSEHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	write := func(msg string) bool {
		_, err := fmt.Fprintf(w, "data: %s\n\n", msg)
		return err == nil && rc.Flush() == nil
	}
	if !write(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"notifications":{"toolsListChanged":%t}}}`, sub, agreed)) {
		return
	}
	complete := func() {
		write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":%s}}}`, sub, sub))
	}
	if !agreed {
		complete() // nothing to listen for: the listen ends at once, as the Go SDK's does
		return
	}
	ch := s.lis.add()
	defer s.lis.remove(ch)
	for {
		select {
		case n := <-ch:
			if !write(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s,%q:%d}}}`, sub, mcpwire.NotificationSeq, n)) {
				return
			}
			s.lis.sent.Add(1)
		case <-r.Context().Done():
			return
		case <-s.cut:
			return // a restart: the connection ends without the completion
		case <-s.done:
			complete()
			return
		}
	}
}
