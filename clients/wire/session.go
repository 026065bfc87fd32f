package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/mcpwire"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Session is one MCP session on the wire: its id, negotiated protocol, and the cursor it
// holds. Its methods are safe for concurrent use.
type Session struct {
	ep        *Endpoint
	ID        string
	Protocol  string // negotiated
	Stateless bool   // the stateless revision: every request stands alone (generation.go)
	Logging   bool   // the server offers logging (logging/setLevel may be sent)
	nextID    atomic.Int64
	cursor    atomic.Pointer[string] // the last event id read on any stream of the session
}

// Cursor is the last SSE event id the session read, on a POST reply or its GET stream: what it
// can resume from with GET + Last-Event-ID (2025-11-25: whether the stream began as a POST or
// a GET). "" when no stream has carried an id.
func (s *Session) Cursor() string {
	if p := s.cursor.Load(); p != nil {
		return *p
	}
	return ""
}

// NoteCursor records id as the session's cursor: for whoever reads its GET stream (Stream's
// events do not note it themselves; a POST reply's do).
func (s *Session) NoteCursor(id string) {
	if id != "" && id != s.Cursor() {
		s.cursor.Store(&id)
	}
}

// Call sends a request and waits for its response.
func (s *Session) Call(ctx context.Context, method string, params any) (*Reply, error) {
	rep, _, err := s.post(ctx, method, params, true)
	return rep, err
}

// Ping sends ping.
func (s *Session) Ping(ctx context.Context) (*Reply, error) { return s.Call(ctx, "ping", nil) }

// ListTools sends tools/list.
func (s *Session) ListTools(ctx context.Context) (*Reply, error) {
	return s.Call(ctx, "tools/list", nil)
}

// CallTool sends tools/call.
func (s *Session) CallTool(ctx context.Context, name string, args any) (*Reply, error) {
	return s.Call(ctx, "tools/call", &mcp.CallToolParams{Name: name, Arguments: args})
}

// CallToolWithProgress sends tools/call with _meta.progressToken, so that a server that
// reports progress answers with an SSE reply whose events carry ids.
func (s *Session) CallToolWithProgress(ctx context.Context, name string, args any, token string) (*Reply, error) {
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	p.SetProgressToken(token)
	return s.Call(ctx, "tools/call", p)
}

// CallToolAs sends tools/call with its _meta: a progress token when token is set (a server
// that reports progress then streams its reply with event ids), and the logical call's name
// under mcpwire.CallKey when call is set (the same on every retry of the call, so that a
// server counting executions knows a call it ran twice).
func (s *Session) CallToolAs(ctx context.Context, name string, args any, token, call string) (*Reply, error) {
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if token != "" {
		p.SetProgressToken(token)
	}
	if call != "" {
		m := p.GetMeta()
		if m == nil {
			m = map[string]any{}
		}
		m[mcpwire.CallKey] = call
		p.SetMeta(m)
	}
	return s.Call(ctx, "tools/call", p)
}

// SetLogLevel sends logging/setLevel, so a server that logs sends log messages.
func (s *Session) SetLogLevel(ctx context.Context, level string) (*Reply, error) {
	//lint:ignore SA1019 logging is deprecated from 2026-07-28 on; session-family servers offer it
	return s.Call(ctx, "logging/setLevel", &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(level)})
}

// Delete ends the session (DELETE). A 405 means the server does not let clients end sessions.
func (s *Session) Delete(ctx context.Context) (int, error) {
	if s.Stateless {
		return http.StatusMethodNotAllowed, nil // nothing to end; a stateless server answers 405
	}
	ctx, cancel := context.WithTimeout(ctx, s.ep.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.ep.URL, nil)
	if err != nil {
		return 0, err
	}
	s.headers(req)
	resp, err := s.ep.HTTP.Do(req)
	err = redactError(err, s.ep.HTTP)
	if err != nil {
		return 0, err
	}
	drain(resp.Body)
	return resp.StatusCode, nil
}

func (s *Session) headers(req *http.Request) {
	if s.ID != "" {
		req.Header.Set("Mcp-Session-Id", s.ID)
	}
	if s.Protocol != "" {
		req.Header.Set("MCP-Protocol-Version", s.Protocol)
	}
}

// post sends one JSON-RPC message. call says whether it is a request (with an id) or a
// notification.
func (s *Session) post(ctx context.Context, method string, params any, call bool) (*Reply, http.Header, error) {
	tr := newExchangeTrace(time.Now) // the session decided to send: dispatch lag counts from here
	ctx, cancel := context.WithTimeout(ctx, s.ep.RequestTimeout)
	defer cancel()
	msg, err := s.message(method, params, call)
	if err != nil {
		return nil, nil, err
	}
	body, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, nil, err
	}
	resp, err := s.send(ctx, body, func(req *http.Request) {
		if s.Stateless {
			statelessHeaders(req, method, params)
		}
	}, tr)
	lag := noteLag(ctx, tr)
	if err != nil {
		return nil, nil, err
	}
	defer drain(resp.Body)
	if got := resp.Header.Get("Mcp-Session-Id"); got != "" && s.ID != "" && got != s.ID {
		s.ep.idChanged.Add(1) // the server answered as another session: silent substitution
	}
	rep := &Reply{Status: resp.StatusCode, Lag: lag}
	if resp.StatusCode/100 != 2 {
		rep.Body = snippet(resp.Body)
		return rep, resp.Header, nil
	}
	if !call {
		return rep, resp.Header, nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		return rep, resp.Header, gzipNamed(s.readJSON(rep, resp.Body, msg.ID), resp)
	case "text/event-stream":
		return rep, resp.Header, gzipNamed(s.readSSE(ctx, rep, resp.Body, msg.ID, method), resp)
	default:
		rep.Body = snippet(resp.Body)
		return rep, resp.Header, &ProtocolError{Msg: fmt.Sprintf("reply to %s has content type %q", method, ct)}
	}
}

// message builds the JSON-RPC message: a request with the session's next id, or a
// notification.
func (s *Session) message(method string, params any, call bool) (*jsonrpc.Request, error) {
	var raw json.RawMessage
	var err error
	switch {
	case s.Stateless:
		raw, err = s.withMeta(params)
	case params != nil:
		raw, err = json.Marshal(params)
	}
	if err != nil {
		return nil, err
	}
	msg := &jsonrpc.Request{Method: method, Params: raw}
	if call {
		// MakeID takes JSON's number type; ids stay far below 2^53.
		if msg.ID, err = jsonrpc.MakeID(float64(s.nextID.Add(1))); err != nil {
			return nil, err
		}
	}
	return msg, nil
}

// send POSTs body with the session's headers; more sets any others. tr, if not nil, collects
// the exchange's instants for its dispatch lag.
func (s *Session) send(ctx context.Context, body []byte, more func(*http.Request), tr *exchangeTrace) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.ep.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	s.headers(req)
	if more != nil {
		more(req)
	}
	if tr != nil {
		req = req.WithContext(httptrace.WithClientTrace(ctx, tr.hooks()))
	}
	resp, err := s.ep.HTTP.Do(req)
	return resp, redactError(err, s.ep.HTTP)
}

func (s *Session) readJSON(rep *Reply, body io.Reader, id jsonrpc.ID) error {
	data, err := io.ReadAll(io.LimitReader(body, s.ep.MaxBody+1))
	if err != nil {
		return err
	}
	if int64(len(data)) > s.ep.MaxBody {
		return &TooLargeError{What: "JSON body", Limit: s.ep.MaxBody}
	}
	return rep.take(data, id)
}

// readSSE reads an SSE reply until the response to id. The server may close a reply's
// connection once it has sent an event id; the client then resumes the reply with GET +
// Last-Event-ID after the server's retry delay (2025-11-25). A reply without ids, or a session
// without an id, cannot be resumed.
func (s *Session) readSSE(ctx context.Context, rep *Reply, body io.Reader, id jsonrpc.ID, method string) error {
	var retry atomic.Int64
	retry.Store(-1)
	cursor := ""
	done, err := s.readReply(ctx, rep, body, id, &cursor, &retry)
	for tries := 0; !done && resumable(err) && cursor != "" && s.ID != "" && tries < maxResumes && ctx.Err() == nil; tries++ {
		if !sleep.For(ctx, RetryDelay(retry.Load(), 0, s.ep.RequestTimeout/4)) {
			break
		}
		st, oerr := s.OpenStream(ctx, cursor)
		if oerr != nil || st.Status != http.StatusOK {
			break
		}
		rep.Resumed++
		done, err = s.readReply(ctx, rep, st.body, id, &cursor, &retry)
		st.Close()
	}
	switch {
	case done || err != nil:
		return err
	case ctx.Err() != nil:
		return ctx.Err()
	}
	// The server may close a reply's connection at any time after an event id (2025-11-25), and
	// a fault may close it cleanly: a reply that ended without its response and could not be
	// resumed is a lost connection, not a broken protocol.
	return fmt.Errorf("SSE reply ended before the response to %s, and could not be resumed: %w", method, io.ErrUnexpectedEOF)
}

// maxResumes bounds how often one request's SSE reply is resumed after its connection closed.
const maxResumes = 2

// readReply reads an SSE reply (or its resumption) until the response to id, tracking the
// reply's cursor (and the session's) and retry value, and answering the server's requests.
func (s *Session) readReply(ctx context.Context, rep *Reply, body io.Reader, id jsonrpc.ID, cursor *string, retry *atomic.Int64) (bool, error) {
	c := s.ep.Conduct()
	for ev, err := range c.watched(readEvents(body, s.ep.MaxEvent, retry), retry, "SSE reply") {
		if err != nil {
			return false, c.classifyRead(ctx, err, body, s.ep.MaxEvent, "SSE reply")
		}
		*cursor = ev.Cursor
		s.NoteCursor(ev.Cursor)
		if ev.Data == "" {
			continue // priming event
		}
		done, req, err := rep.takeEvent([]byte(ev.Data), id)
		if req != nil && req.IsCall() {
			s.Answer(ctx, req)
		}
		if done || err != nil {
			return done, err
		}
	}
	return false, nil
}

// resumable says whether a reply that ended with err may be resumed: it ended cleanly or its
// connection broke; not when its content was at fault.
func resumable(err error) bool {
	if err == nil {
		return true
	}
	k := Kind(err)
	return k == metrics.ErrReset || k == metrics.ErrTimeout && !errors.Is(err, context.DeadlineExceeded)
}

// gzipNamed says, of a reply over its cap or that did not decode, that it came compressed
// (inflated by net/http, or sent with a Content-Encoding nobody asked for): a gzip bomb is
// named as one, not as "invalid character '\x1f'" (gzip's first byte).
func gzipNamed(err error, resp *http.Response) error {
	return encodingNamed(err, encodingNote(resp))
}

// encodingNote is what gzipNamed adds for resp: empty for a plain body.
func encodingNote(resp *http.Response) string {
	switch enc := resp.Header.Get("Content-Encoding"); {
	case resp.Uncompressed:
		return " (of a gzip body, inflated)"
	case enc == "gzip" || enc == "x-gzip":
		return " (the body was gzip-encoded: Content-Encoding: gzip, which mcpchaos does not ask for and reads as its compressed bytes)"
	case enc != "" && enc != "identity":
		return fmt.Sprintf(" (of a body sent with Content-Encoding: %.20s)", enc)
	}
	return ""
}

// encodingNamed adds note to err: to a TooLargeError's what, or after any other error's text
// (errors.As and Kind still see what it wraps).
func encodingNamed(err error, note string) error {
	if note == "" || err == nil {
		return err
	}
	var te *TooLargeError
	if errors.As(err, &te) {
		te.What += note
		return err
	}
	return fmt.Errorf("%w%s", err, note)
}
