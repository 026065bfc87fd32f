package refserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/mcpwire"
)

// maxBodyBytes bounds a POSTed message.
const maxBodyBytes = 1 << 20

// servePost handles one POSTed JSON-RPC message. Every session-scoped POST,
// whatever its method, is checked against the session store and refreshes
// the session's TTL: these are the requests that can serve as probes.
func (s *Server) servePost(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		if tooBig := new(http.MaxBytesError); errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("body exceeds %d bytes", maxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	msg, err := mcpwire.Decode(body)
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, rpcError(jsonrpc.CodeParseError, "%v", err))
		return
	}
	req, _ := msg.(*jsonrpc.Request)
	isCall := req != nil && req.IsCall()
	if isCall && !accepts(r, "application/json", "text/event-stream") {
		http.Error(w, "Accept must list application/json and text/event-stream", http.StatusNotAcceptable)
		return
	}
	if s.eraRefuses(w, r, req) { // a request of the generation this server does not speak
		return
	}
	if isCall && req.Method == "initialize" {
		s.initialize(w, req) // whatever headers it carries: a client of the session family
		return
	}
	if statelessRequest(r) || (s.cfg.Era == EraStateless && r.Header.Get("Mcp-Method") != "") { // the 2026-07-28 revision: no session (stateless.go); a stateless-only server ignores Mcp-Session-Id
		s.serveStateless(w, r, req)
		return
	}
	key, ok := s.sessionHeader(w, r)
	if !ok {
		return
	}
	rec := s.sessions.get(key)
	if rec == nil || !rec.touch(s.now(), s.ttl, s.absolute) {
		s.writeDead(w)
		return
	}
	if !isCall { // a notification or a response: nothing to answer
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.answer(s.reply(w, rec.log), req)
}

// initialize creates a session: its record and its event log.
func (s *Server) initialize(w http.ResponseWriter, req *jsonrpc.Request) {
	var p initializeParams
	_ = json.Unmarshal(req.Params, &p) // lenient: bad params negotiate the latest version
	version := protocolVersions[0]
	if supportedVersion(p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	if !s.sessions.reserve(s.cfg.MaxSessions) {
		s.refuseSession(w) // leak.go: 503, as the Python SDK answers above its cap
		return
	}
	key := newSessionKey()
	rec := &session{key: key, log: newEventLog(s.limits, key)}
	rec.log.primes = version >= "2025-11-25" // revisions are dates: they sort as strings
	rec.lastRefresh.Store(s.now())
	s.logs.add(rec.key, rec.log) // before the record: a live session always has a log
	s.sessions.insert(rec)
	s.created.Add(1)
	w.Header().Set("Mcp-Session-Id", rec.key.String())
	s.reply(w, rec.log).respond(req.ID, initializeResult{
		ProtocolVersion: version,
		Capabilities:    map[string]any{"tools": struct{}{}, "logging": struct{}{}},
		ServerInfo:      implementation{Name: ServerName, Version: ServerVersion},
	}, nil)
}

// answer runs a request of a live session.
func (s *Server) answer(rp *reply, req *jsonrpc.Request) {
	switch req.Method {
	case "ping", "logging/setLevel":
		rp.respond(req.ID, struct{}{}, nil)
	case "tools/list":
		rp.respond(req.ID, tools, nil)
	case "tools/call":
		s.callTool(rp, req)
	default:
		rp.respond(req.ID, nil, rpcError(jsonrpc.CodeMethodNotFound, "method not found: %s", req.Method))
	}
}

func (s *Server) callTool(rp *reply, req *jsonrpc.Request) {
	var p callParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		rp.respond(req.ID, nil, rpcError(jsonrpc.CodeInvalidParams, "tools/call params: %v", err))
		return
	}
	if p.Name == "echo" || p.Name == "slow" {
		s.execs.ran(p.Meta.Call) // the tool runs: a second run of the same call is a fact
	}
	switch p.Name {
	case "echo":
		var args echoArgs
		if err := json.Unmarshal(p.Arguments, &args); err != nil || args.Text == nil {
			rp.respond(req.ID, nil, rpcError(jsonrpc.CodeInvalidParams, "echo wants arguments {text: string}"))
			return
		}
		rp.respond(req.ID, textResult(*args.Text), nil)
	case "slow":
		token := p.Meta.ProgressToken
		if bytes.Equal(token, []byte("null")) {
			token = nil
		}
		steps, step := slowArgs(p.Arguments, s.cfg.SlowSteps, s.cfg.SlowStep)
		pause := time.NewTimer(step)
		defer pause.Stop()
		for i := 1; i <= steps; i++ {
			rp.flush() // the priming event and the progress so far reach the client before the wait
			select {
			case <-pause.C:
			case <-s.done: // the server is closing: abandon the call unanswered
				return
			}
			if token != nil {
				rp.notify(progressMessage(token, i, steps))
			}
			pause.Reset(step)
		}
		rp.respond(req.ID, textResult(fmt.Sprintf("slow: done after %d steps", steps)), nil)
	default:
		rp.respond(req.ID, nil, rpcError(jsonrpc.CodeInvalidParams, "unknown tool %q", p.Name))
	}
}

// slowArgs reads the slow tool's optional arguments, steps (0 to 100) and step_ms (0 to
// 5000), over the server's defaults: a caller that needs a call to outlast a moment (mcpchaos
// matrix cuts every client's call mid-stream) says how long.
func slowArgs(raw json.RawMessage, steps int, step time.Duration) (int, time.Duration) {
	var a struct {
		Steps  *int `json:"steps"`
		StepMS *int `json:"step_ms"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return steps, step
	}
	if a.Steps != nil && *a.Steps >= 0 && *a.Steps <= 100 {
		steps = *a.Steps
	}
	if a.StepMS != nil && *a.StepMS >= 0 && *a.StepMS <= 5000 {
		step = time.Duration(*a.StepMS) * time.Millisecond
	}
	return steps, step
}

// reply answers one POSTed request, either with one JSON body or (PostSSE)
// with an SSE stream: a priming event, any notifications, the response, end.
// The SSE events are logged under their own stream of the session's log, so
// a client that loses the connection can resume them with a GET.
type reply struct {
	s      *Server
	w      http.ResponseWriter
	log    *eventLog
	stream uint32 // 0 when answering with JSON
	gone   bool   // the client went away: the call goes on, logged but unsent
}

func (s *Server) reply(w http.ResponseWriter, log *eventLog) *reply {
	rp := &reply{s: s, w: w, log: log}
	if s.cfg.PostResponse != PostSSE {
		return rp
	}
	stream, priming := log.openPost(s.now())
	rp.stream = stream
	setSSEHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	rp.sent(writePriming(w, priming, s.cfg.Retry, log.primes))
	return rp
}

// notify sends a notification related to the request. A JSON answer has no
// room for one, so it is dropped there.
func (rp *reply) notify(msg []byte) {
	if rp.stream == 0 {
		return
	}
	id := rp.log.emit(rp.s.now(), rp.stream, msg, false)
	rp.s.emitted.Add(1)
	if !rp.gone {
		rp.sent(writeEvent(rp.w, id, msg))
	}
}

func (rp *reply) respond(id jsonrpc.ID, result any, rpcErr *jsonrpc.Error) {
	msg := encodeResponse(id, result, rpcErr)
	if rp.stream == 0 {
		rp.w.Header().Set("Content-Type", "application/json")
		rp.w.WriteHeader(http.StatusOK)
		_, _ = rp.w.Write(msg)
		return
	}
	eid := rp.log.emit(rp.s.now(), rp.stream, msg, true)
	rp.s.emitted.Add(1)
	if !rp.gone {
		rp.sent(writeEvent(rp.w, eid, msg))
	}
}

// sent notes a failed write: the client has gone. What was written goes out at the next
// flush, before the call waits, or when the handler returns, where net/http sends it with the
// end of the chunked body in one write. A reply that does not wait is thus one segment on the
// wire, not three (a priming event, the response and the end flushed apart): per session
// established, the server, the proxy and the client each handle two writes fewer.
func (rp *reply) sent(err error) {
	rp.gone = rp.gone || err != nil
}

// flush sends what was written so far, before the call waits, and notes when the client has
// gone.
func (rp *reply) flush() {
	if rp.stream != 0 && !rp.gone {
		rp.gone = http.NewResponseController(rp.w).Flush() != nil
	}
}

func writeRPCError(w http.ResponseWriter, status int, rpcErr *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// A response to no request: id null, which jsonrpc.EncodeMessage would omit.
	_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":%s}`, mustJSON(rpcErr))
}

// accepts says whether the request's Accept headers list every one of types.
func accepts(r *http.Request, types ...string) bool {
	accept := strings.ToLower(strings.Join(r.Header.Values("Accept"), ","))
	for _, t := range types {
		if !strings.Contains(accept, t) {
			return false
		}
	}
	return true
}
