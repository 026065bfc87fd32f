// Package hostile is an MCP server that misbehaves in one way per path, for the tests of the
// clients' packages: what a hostile or broken server can do to a client must stay bounded.
// It must not import the clients' packages (their in-package tests import it).
package hostile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Server is an MCP server that misbehaves in one way per path: /<behaviour>. Initialize is
// answered properly (with a session id) unless the behaviour is about initialize, so that the
// misbehaviour reaches the request it is about. elsewhere counts requests that a redirect off
// the origin would have sent to another host.
type Server struct {
	srv       *httptest.Server
	elsewhere *httptest.Server
	OffOrigin atomic.Int64  // requests a redirect off the origin would have sent elsewhere
	sessions  atomic.Int64  // sessions begun on /one-session
	closing   chan struct{} // closed by Close: handlers that wait for nothing end
}

// protocol is the version the server answers initialize with.
const protocol = "2025-11-25"

// Behaviours that act only on GET: POSTs are served as a healthy server serves them.
var getOnly = map[string]bool{"get-405": true, "get-409": true, "get-409-body-never-sent": true, "event-64mib": true, "gzip-stream": true, "quiet-stream": true}

// answerSetup answers what a session is set up with, initialize, notifications and
// tools/list, as a healthy server does, so that a run or inspect reaches the misbehaviour.
func answerSetup(w http.ResponseWriter, m rpcMsg) {
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted) // notifications/initialized
		return
	}
	w.Header().Set("Mcp-Session-Id", "s-1")
	w.Header().Set("Content-Type", "application/json")
	if m.Method == "tools/list" {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`, m.ID)
		return
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}}`, m.ID, protocol)
}

// answerCall answers ping or tools/call with a result.
func answerCall(w http.ResponseWriter, m rpcMsg) {
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, m.ID)
}

// Behaviours that act on every request of a session, initialize included.
var beforeInit = map[string]bool{
	"redirect-off-origin": true, "redirect-loop": true, "trickle-headers": true, "huge-header": true,
	"huge-session-id": true, "control-session-id": true, "never-answered": true,
}

// New starts a hostile server, closed when the test ends.
func New(t *testing.T) *Server {
	t.Helper()
	h := Start()
	t.Cleanup(h.Close)
	return h
}

// Start starts a hostile server on loopback outside a test (bench/fault-timeline.sh runs one
// through cmd/hostile-server); Close stops it.
func Start() *Server {
	h := &Server{closing: make(chan struct{})}
	h.elsewhere = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.OffOrigin.Add(1)
	}))
	gzipBomb() // built before any client waits for it
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	return h
}

// Close stops the server and cuts its connections.
func (h *Server) Close() {
	close(h.closing) // a handler whose request body is unread gets no cancellation from net/http
	h.srv.CloseClientConnections()
	h.srv.Close()
	h.elsewhere.Close()
}

// URL is the address of one behaviour.
func (h *Server) URL(behaviour string) string { return h.srv.URL + "/" + behaviour }

type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// serve is long on purpose: one case per misbehaviour, read as a table of what the server does.
func (h *Server) serve(w http.ResponseWriter, r *http.Request) {
	b := strings.TrimPrefix(r.URL.Path, "/")
	var m rpcMsg
	if r.Method == http.MethodPost {
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m)
	}
	if r.Method == http.MethodDelete {
		return
	}
	if b == "one-session" && m.Method == "initialize" && h.sessions.Add(1) > 1 {
		http.Error(w, "no more sessions", http.StatusForbidden) // every session after the first
		return
	}
	if !beforeInit[b] && r.Method == http.MethodPost && m.Method != "" && m.Method != "ping" && m.Method != "tools/call" {
		answerSetup(w, m)
		return
	}
	if getOnly[b] && r.Method == http.MethodPost { // the misbehaviour is the GET's: calls are served
		answerCall(w, m)
		return
	}
	sse := func() {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
	}
	ctx := r.Context()
	switch b {
	case "giant-event": // one event of many lines, never finished
		sse()
		line := []byte("data: " + strings.Repeat("x", 1000) + "\n")
		for i := 0; i < 256<<10 && ctx.Err() == nil; i++ { // at most 256 MB
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	case "endless-line":
		sse()
		_, _ = io.WriteString(w, "data: ")
		chunk := bytes.Repeat([]byte("y"), 32<<10)
		for i := 0; i < 8<<10 && ctx.Err() == nil; i++ { // at most 256 MB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	case "trickle-headers", "trickle-stream-headers":
		conn, bw := hijack(w)
		defer conn.Close()
		resp := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + strings.Repeat("z", 1000)
		for i := range len(resp) {
			if bw.WriteByte(resp[i]) != nil || bw.Flush() != nil {
				return
			}
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				return
			}
		}
	case "never-answered", "never-answered-stream":
		select {
		case <-ctx.Done():
		case <-h.closing:
		}
	case "stalled-sse-reply": // a notification, then nothing
		sse()
		_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
		w.(http.Flusher).Flush()
		<-ctx.Done()
	case "html":
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html><body>Bad gateway</body></html>")
	case "no-content-type":
		w.Header()["Content-Type"] = nil // no sniffing either
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	case "not-json":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "this is not JSON")
	case "not-json-sse":
		sse()
		_, _ = io.WriteString(w, "data: <<<not json>>>\n\n")
	case "wrong-id":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":987654,"result":{}}`)
	case "result-and-error":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{},"error":{"code":-32603,"message":"both"}}`, m.ID)
	case "no-version":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%s,"result":{}}`, m.ID)
	case "storm-500":
		w.Header().Set("Retry-After", "999999999")
		http.Error(w, "storm", http.StatusInternalServerError)
	case "storm-429":
		w.Header().Set("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	case "redirect-off-origin":
		http.Redirect(w, r, h.elsewhere.URL+"/mcp", http.StatusTemporaryRedirect)
	case "redirect-loop":
		http.Redirect(w, r, "/redirect-loop", http.StatusTemporaryRedirect)
	case "gzip-bomb", "gzip-bomb-sse":
		w.Header().Set("Content-Encoding", "gzip")
		if b == "gzip-bomb" {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		_, _ = w.Write(gzipBomb())
	case "reset-mid-event":
		conn, bw := hijack(w)
		_, _ = io.WriteString(bw, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		ev := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"meth"
		fmt.Fprintf(bw, "%x\r\n%s\r\n", len(ev), ev)
		_ = bw.Flush()
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST, not FIN
		}
		conn.Close()
	case "huge-header":
		w.Header().Set("X-Huge", strings.Repeat("h", 200<<10))
		w.Header().Set("Content-Type", "text/event-stream")
	case "huge-session-id":
		w.Header().Set("Mcp-Session-Id", strings.Repeat("s", 8<<10))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q}}`, m.ID, protocol)
	case "control-session-id":
		w.Header().Set("Mcp-Session-Id", "abc\tdef")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q}}`, m.ID, protocol)
	case "event-ids": // backwards, repeated, then emptied; then the stream ends (a POST's with its response)
		sse()
		_, _ = io.WriteString(w, "id: 5\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\nid: 3\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n\nid: 3\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"c\"}\n\nid\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"d\"}\n\n")
		if m.ID != nil {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[]}}\n\n", m.ID)
		}
	case "absurd-retry": // a POST's reply carries its response after the retry
		sse()
		_, _ = io.WriteString(w, "retry: 9223372036854775807\n\n")
		if m.ID != nil {
			fmt.Fprintf(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[]}}\n\n", m.ID)
		}
	case "event-64mib": // the GET stream: events of 64 MiB each, as fast as the client takes them
		sse()
		line := bytes.Repeat([]byte("x"), 1<<20)
		for n := 0; n < 16 && ctx.Err() == nil; n++ { // at most 1 GiB a stream
			_, _ = io.WriteString(w, "data: ")
			for range 64 {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
			if _, err := io.WriteString(w, "\n\n"); err != nil {
				return
			}
		}
	case "gzip-stream": // the GET stream: a gzip bomb sent as an event stream, again and again
		w.Header().Set("Content-Encoding", "gzip")
		sse()
		for n := 0; n < 64 && ctx.Err() == nil; n++ { // at most 64 GiB inflated, about 64 MB sent
			if _, err := w.Write(gzipBomb()); err != nil {
				return
			}
		}
	case "quiet-stream": // not hostile: a GET stream of keepalive comments, a control for benchmarks
		sse()
		for n := 0; n < 600 && ctx.Err() == nil; n++ { // at most a minute
			if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	case "one-session": // one session (a run's preflight), then every initialize refused; calls served
		answerCall(w, m)
	case "get-405":
		w.WriteHeader(http.StatusMethodNotAllowed)
	case "get-409":
		w.WriteHeader(http.StatusConflict)
	case "get-409-body-never-sent": // promises a body, sends none
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusConflict)
			w.(http.Flusher).Flush()
			<-ctx.Done()
		}
	default:
		http.NotFound(w, r)
	}
}

func hijack(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter) {
	conn, bw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	return conn, bw
}

var (
	bombOnce sync.Once
	bomb     []byte
)

// gzipBomb inflates to 1 GiB of zeros: 64 gzip members of 16 MiB each (a gzip stream may hold
// many), about 1 MB on the wire and quick to build.
func gzipBomb() []byte {
	bombOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(make([]byte, 16<<20))
		_ = zw.Close()
		bomb = bytes.Repeat(buf.Bytes(), 64)
	})
	return bomb
}
