package clients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/mcpwire"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Protocol versions of the session family that this client speaks.
const (
	Protocol20251125 = "2025-11-25"
	Protocol20250618 = "2025-06-18"
	Protocol20250326 = "2025-03-26"
)

// Supported reports whether v is a protocol version this client can speak.
func Supported(v string) bool {
	return v == Protocol20251125 || v == Protocol20250618 || v == Protocol20250326
}

// Endpoint is an MCP endpoint and how to talk to it. One Endpoint is shared by every session
// of a group: its http.Client pools connections.
type Endpoint struct {
	URL            string
	HTTP           *http.Client
	Protocol       string        // offered in initialize
	RequestTimeout time.Duration // every POST and DELETE, and a GET until its headers arrive
	MaxBody        int64         // cap on a JSON body
	MaxEvent       int           // cap on one SSE event
	ClientName     string
	// Generation is what the server speaks (Negotiate finds out). For Stateless, Protocol is
	// the stateless revision and sessions are only request contexts: no initialize, no id, no
	// GET stream, no DELETE.
	Generation Generation
}

// NewTransport returns an HTTP/1.1 transport sized for many sessions to one host: every held
// session keeps one connection for its GET stream and borrows pooled ones for POSTs. Buffers
// are small because MCP messages here are small, and each held stream pays for them.
func NewTransport(maxConns int) *http.Transport {
	return &http.Transport{
		Proxy:                  nil, // loopback proxies are in the URL; never an environment proxy
		DialContext:            (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:           maxConns,
		MaxIdleConnsPerHost:    maxConns,
		IdleConnTimeout:        90 * time.Second,
		ResponseHeaderTimeout:  0, // per request, through its context
		MaxResponseHeaderBytes: MaxHeaderBytes,
		DisableCompression:     true,
		ReadBufferSize:         2 << 10,
		WriteBufferSize:        2 << 10,
		ForceAttemptHTTP2:      false,
	}
}

// MaxHeaderBytes caps a response's header block, on pooled connections and held streams alike.
const MaxHeaderBytes = 64 << 10

// maxSessionID caps the length of a session id the client accepts: it is sent back on every
// request, so a huge one would cost every request of the session.
const maxSessionID = 1 << 10

// Reply is what the server answered to one request.
type Reply struct {
	Status        int
	Result        json.RawMessage // the JSON-RPC result, when there is one
	RPCError      *jsonrpc.Error  // the JSON-RPC error, when there is one
	Notifications int             // server messages that came before the response (SSE replies)
	Resumed       int             // times the SSE reply was resumed with GET + Last-Event-ID
	Body          string          // the start of a non-JSON-RPC body, for error reports
}

// OK reports whether the request got a JSON-RPC result.
func (r *Reply) OK() bool { return r != nil && r.Status/100 == 2 && r.Result != nil }

// Session is one MCP session on the wire: its id and negotiated protocol. Its methods are safe
// for concurrent use.
type Session struct {
	ep        *Endpoint
	ID        string
	Protocol  string // negotiated
	Stateless bool   // the stateless revision: every request stands alone (stateless.go)
	nextID    atomic.Int64
}

// Initialize opens a session: initialize, then notifications/initialized. Against a stateless
// server there is nothing to open: it returns a session that only carries the protocol.
func (ep *Endpoint) Initialize(ctx context.Context) (*Session, *Reply, error) {
	if ep.Generation == Stateless {
		return &Session{ep: ep, Protocol: ep.Protocol, Stateless: true}, nil, nil
	}
	s := &Session{ep: ep}
	params := &mcp.InitializeParams{
		ProtocolVersion: ep.Protocol,
		ClientInfo:      &mcp.Implementation{Name: ep.ClientName, Version: "1"},
		Capabilities:    &mcp.ClientCapabilities{},
	}
	rep, hdr, err := s.post(ctx, "initialize", params, true)
	if err != nil {
		return nil, rep, err
	}
	if !rep.OK() {
		return nil, rep, &StatusError{Status: rep.Status, Body: rep.Body, RPC: rep.RPCError}
	}
	var res mcp.InitializeResult
	if err := json.Unmarshal(rep.Result, &res); err != nil {
		return nil, rep, &ProtocolError{Msg: "initialize result: " + err.Error()}
	}
	if !Supported(res.ProtocolVersion) {
		return nil, rep, &ProtocolError{Msg: fmt.Sprintf("server chose protocol %q, which this client does not speak", res.ProtocolVersion)}
	}
	s.Protocol = res.ProtocolVersion
	s.ID = hdr.Get("Mcp-Session-Id")
	if err := checkSessionID(s.ID); err != nil {
		return nil, rep, err
	}
	if _, _, err := s.post(ctx, "notifications/initialized", nil, false); err != nil {
		return nil, rep, err
	}
	return s, rep, nil
}

// checkSessionID enforces the transport's rule for session ids (visible ASCII, 0x21 to 0x7E)
// and the client's cap on their length.
func checkSessionID(id string) error {
	if len(id) > maxSessionID {
		return &BadSessionIDError{Reason: fmt.Sprintf("%d bytes long, over the cap of %d", len(id), maxSessionID)}
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return &BadSessionIDError{Reason: fmt.Sprintf("byte 0x%02x at offset %d is not visible ASCII", id[i], i)}
		}
	}
	return nil
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
	ctx, cancel := context.WithTimeout(ctx, s.ep.RequestTimeout)
	defer cancel()
	var raw json.RawMessage
	if s.Stateless {
		b, err := s.withMeta(params)
		if err != nil {
			return nil, nil, err
		}
		raw = b
	} else if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, nil, err
		}
		raw = b
	}
	msg := &jsonrpc.Request{Method: method, Params: raw}
	if call {
		// MakeID takes JSON's number type; ids stay far below 2^53.
		id, err := jsonrpc.MakeID(float64(s.nextID.Add(1)))
		if err != nil {
			return nil, nil, err
		}
		msg.ID = id
	}
	body, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.ep.URL, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	s.headers(req)
	if s.Stateless {
		statelessHeaders(req, method, params)
	}
	resp, err := s.ep.HTTP.Do(req)
	err = redactError(err, s.ep.HTTP)
	if err != nil {
		return nil, nil, err
	}
	defer drain(resp.Body)
	rep := &Reply{Status: resp.StatusCode}
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
		data, err := io.ReadAll(io.LimitReader(resp.Body, s.ep.MaxBody+1))
		if err != nil {
			return rep, resp.Header, err
		}
		if int64(len(data)) > s.ep.MaxBody {
			return rep, resp.Header, &TooLargeError{What: "JSON body", Limit: s.ep.MaxBody}
		}
		return rep, resp.Header, rep.take(data, msg.ID)
	case "text/event-stream":
		var retry atomic.Int64
		retry.Store(-1)
		cursor := ""
		done, err := rep.readReply(resp.Body, s.ep.MaxEvent, msg.ID, &cursor, &retry)
		// The server may close a reply's connection once it has sent an event id; the client
		// then resumes the reply with GET + Last-Event-ID after the server's retry delay
		// (2025-11-25). A reply without ids, or a session without an id, cannot be resumed.
		for tries := 0; !done && resumable(err) && cursor != "" && s.ID != "" && tries < maxResumes && ctx.Err() == nil; tries++ {
			if !sleep(ctx, retryDelay(retry.Load(), 0, s.ep.RequestTimeout/4)) {
				break
			}
			st, oerr := s.OpenStream(ctx, cursor)
			if oerr != nil || st.Status != http.StatusOK {
				break
			}
			rep.Resumed++
			done, err = rep.readReply(st.resp.Body, s.ep.MaxEvent, msg.ID, &cursor, &retry)
			st.Close()
		}
		if done || err != nil {
			return rep, resp.Header, err
		}
		if ctx.Err() != nil {
			return rep, resp.Header, ctx.Err()
		}
		return rep, resp.Header, &ProtocolError{Msg: "SSE reply ended before the response to " + method}
	default:
		rep.Body = snippet(resp.Body)
		return rep, resp.Header, &ProtocolError{Msg: fmt.Sprintf("reply to %s has content type %q", method, ct)}
	}
}

// maxResumes bounds how often one request's SSE reply is resumed after its connection closed.
const maxResumes = 2

// readReply reads an SSE reply (or its resumption) until the response to id, tracking the
// reply's cursor and retry value.
func (r *Reply) readReply(body io.Reader, maxEvent int, id jsonrpc.ID, cursor *string, retry *atomic.Int64) (bool, error) {
	for ev, err := range readEvents(body, maxEvent, retry) {
		if err != nil {
			return false, classifyRead(err, maxEvent)
		}
		*cursor = ev.Cursor
		if ev.Data == "" {
			continue // priming event
		}
		if done, err := r.takeEvent([]byte(ev.Data), id); done || err != nil {
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

// take reads a single JSON-RPC response.
func (r *Reply) take(data []byte, id jsonrpc.ID) error {
	done, err := r.takeEvent(data, id)
	if err == nil && !done {
		err = &ProtocolError{Msg: "JSON reply is not the response to the request"}
	}
	return err
}

// takeEvent reads one message of an SSE reply: a server message before the response, or the
// response itself (done).
func (r *Reply) takeEvent(data []byte, id jsonrpc.ID) (done bool, err error) {
	m, err := mcpwire.Decode(data)
	if err != nil {
		return false, &ProtocolError{Msg: "undecodable JSON-RPC message: " + err.Error()}
	}
	switch m := m.(type) {
	case *jsonrpc.Request:
		r.Notifications++
		return false, nil
	case *jsonrpc.Response:
		if m.ID != id {
			return false, &ProtocolError{Msg: fmt.Sprintf("response id %v does not match request id %v", m.ID.Raw(), id.Raw())}
		}
		if m.Error != nil && m.Result != nil {
			return false, &ProtocolError{Msg: "response has both a result and an error"}
		}
		if m.Error != nil {
			var we *jsonrpc.Error
			if errors.As(m.Error, &we) {
				r.RPCError = we
			} else {
				r.RPCError = &jsonrpc.Error{Code: -32603, Message: m.Error.Error()}
			}
			return true, nil
		}
		r.Result = m.Result
		if r.Result == nil {
			r.Result = json.RawMessage("null")
		}
		return true, nil
	}
	return false, &ProtocolError{Msg: "unexpected JSON-RPC message"}
}

// Stream is an open GET stream.
type Stream struct {
	Status int
	Body   string // start of the body when Status is not 200
	resp   *http.Response
	cancel context.CancelFunc
	retry  atomic.Int64
}

// OpenStream sends the GET for the session's standalone stream, with Last-Event-ID when cursor
// is not empty (a replay). It returns once the response headers are in; a non-200 stream
// carries the status and is already closed. ctx ends the stream.
func (s *Session) OpenStream(ctx context.Context, cursor string) (*Stream, error) {
	if s.Stateless {
		// The stateless revision has no GET stream; its servers answer 405, so answer that
		// without asking.
		return &Stream{Status: http.StatusMethodNotAllowed, cancel: func() {}}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.ep.URL, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	s.headers(req)
	if cursor != "" {
		req.Header.Set("Last-Event-ID", cursor)
	}
	// The request timeout bounds the wait for headers only; an open stream may idle for long.
	headers := time.AfterFunc(s.ep.RequestTimeout, cancel)
	resp, err := s.ep.HTTP.Do(req)
	err = redactError(err, s.ep.HTTP)
	if !headers.Stop() { // the wait for headers outlived the request timeout
		if err == nil {
			drain(resp.Body)
		}
		err = fmt.Errorf("GET stream: no response headers within %v: %w", s.ep.RequestTimeout, context.DeadlineExceeded)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	st := &Stream{Status: resp.StatusCode, resp: resp, cancel: cancel}
	st.retry.Store(-1)
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode == http.StatusOK && ct == "text/event-stream" {
		return st, nil
	}
	// Not a stream: the start of its body, for the report, within the request timeout too (a
	// body that never comes must not hold the client).
	body := time.AfterFunc(s.ep.RequestTimeout, cancel)
	st.Body = snippet(resp.Body)
	body.Stop()
	st.Close()
	if resp.StatusCode != http.StatusOK {
		return st, nil
	}
	return st, &ProtocolError{Msg: fmt.Sprintf("GET stream has content type %q", ct)}
}

// Events yields the stream's events until it ends. The error is nil when the server closed
// the stream cleanly.
func (st *Stream) Events(maxEvent int) iter.Seq2[Event, error] {
	return readEvents(st.resp.Body, maxEvent, &st.retry)
}

// Retry is the last `retry:` value the server sent on this stream, in ms, or -1.
func (st *Stream) Retry() int64 { return st.retry.Load() }

// Close ends the stream.
func (st *Stream) Close() {
	st.cancel()
	if st.resp != nil {
		st.resp.Body.Close()
	}
}

func drain(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 64<<10)
	body.Close()
}

func snippet(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 256))
	return string(b)
}

// StatusError is an HTTP status that is not a success.
type StatusError struct {
	Status int
	Body   string
	RPC    *jsonrpc.Error
}

func (e *StatusError) Error() string {
	if e.RPC != nil {
		return fmt.Sprintf("HTTP %d, JSON-RPC error %d: %s", e.Status, e.RPC.Code, e.RPC.Message)
	}
	return "HTTP " + strconv.Itoa(e.Status) + " " + e.Body
}

// ProtocolError is a reply that breaks the transport's rules.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "protocol: " + e.Msg }

// BadSessionIDError is a session id the client refuses to send back.
type BadSessionIDError struct{ Reason string }

func (e *BadSessionIDError) Error() string { return "bad session id: " + e.Reason }

// TooLargeError is a body or event over its cap.
type TooLargeError struct {
	What  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s larger than its cap of %d bytes", e.What, e.Limit)
}

func classifyRead(err error, maxEvent int) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return &TooLargeError{What: "SSE event", Limit: int64(maxEvent)}
	}
	return err
}

// Kind classifies an error for the export's error counts.
func Kind(err error) metrics.ErrorKind {
	var (
		pe *ProtocolError
		te *TooLargeError
		se *StatusError
		re *RedirectError
		be *BadSessionIDError
		ne net.Error
	)
	switch {
	case errors.As(err, &re):
		return metrics.ErrRedirect
	case errors.As(err, &be):
		return metrics.ErrBadSessionID
	case errors.As(err, &te):
		return metrics.ErrTooLarge
	case errors.As(err, &pe):
		return metrics.ErrProtocol
	case errors.As(err, &se):
		return metrics.ErrStatus
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return metrics.ErrTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return metrics.ErrConnect
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, syscall.EPIPE):
		return metrics.ErrReset
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return metrics.ErrConnect
	}
	if strings.Contains(err.Error(), "server response headers exceeded") {
		return metrics.ErrTooLarge // net/http's MaxResponseHeaderBytes; its error is not exported
	}
	return metrics.ErrOther
}
