// Over 400 lines on purpose: the one raw-HTTP client (requests, answers, SSE streams) that
// every test of the reference server speaks the wire with, kept in one place.

package refserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// waitLimit bounds every wait of these tests for something the server does.
const waitLimit = 5 * time.Second

// fakeClock is a Config.Now the test moves by hand, so liveness is exact and
// nothing waits for a TTL. The server's tickers still run on real time.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 12, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// serve starts a Server for cfg behind an httptest server; both end with
// the test (the Server first, so open streams do not hold httptest up).
func serve(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	srv := New(cfg)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return srv, ts.URL + "/mcp"
}

// eventually waits, bounded, for cond to hold.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// client is a minimal MCP client of plain net/http: enough to drive the
// server through each case, and to send what a real client would not.
type client struct {
	t       *testing.T
	url     string
	session string // Mcp-Session-Id, once initialized
	version string // MCP-Protocol-Version sent after initialize
	nextID  int
}

func newClient(t *testing.T, url string) *client {
	return &client{t: t, url: url}
}

// request sends method with body and the headers a well-behaved client sends
// (Accept, session id, protocol version); extra is header name/value pairs
// that override them ("" removes one).
func (c *client) request(method, body string, extra ...string) *http.Response {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, method, c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.version != "" {
		req.Header.Set("MCP-Protocol-Version", c.version)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			req.Header.Del(extra[i])
		} else {
			req.Header.Set(extra[i], extra[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, c.url, err)
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// message encodes a JSON-RPC request (a notification if id is 0).
func message(id int, method string, params any) string {
	var p string
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			panic(err)
		}
		p = `,"params":` + string(b)
	}
	if id == 0 {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q%s}`, method, p)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q%s}`, id, method, p)
}

// post sends a request and returns the raw response.
func (c *client) post(method string, params any, extra ...string) *http.Response {
	c.t.Helper()
	c.nextID++
	return c.request(http.MethodPost, message(c.nextID, method, params), extra...)
}

// answer is a POSTed request's outcome: its JSON-RPC response and, for SSE,
// every event of the stream (priming first).
type answer struct {
	resp   *jsonrpc.Response
	events []sseEvent
}

func (a answer) result(t *testing.T, into any) {
	t.Helper()
	if a.resp.Error != nil {
		t.Fatalf("JSON-RPC error: %v", a.resp.Error)
	}
	if err := json.Unmarshal(a.resp.Result, into); err != nil {
		t.Fatalf("decoding result %s: %v", a.resp.Result, err)
	}
}

func (a answer) errorCode(t *testing.T) int64 {
	t.Helper()
	werr, ok := a.resp.Error.(*jsonrpc.Error)
	if !ok {
		t.Fatalf("want a JSON-RPC error, got result %s", a.resp.Result)
	}
	return werr.Code
}

// call sends a request, wants 200, and reads the whole answer.
func (c *client) call(method string, params any) answer {
	c.t.Helper()
	resp := c.post(method, params)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("%s: status %d, body %q", method, resp.StatusCode, body)
	}
	return readAnswer(c.t, resp)
}

func readAnswer(t *testing.T, resp *http.Response) answer {
	t.Helper()
	var a answer
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading answer: %v", err)
	}
	switch ct := resp.Header.Get("Content-Type"); ct {
	case "application/json":
	case "text/event-stream":
		a.events = parseSSE(string(data))
		if len(a.events) == 0 {
			t.Fatalf("empty SSE answer")
		}
		data = []byte(a.events[len(a.events)-1].data)
	default:
		t.Fatalf("answer content type %q", ct)
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		t.Fatalf("decoding answer %s: %v", data, err)
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		t.Fatalf("answer is not a response: %s", data)
	}
	a.resp = r
	return a
}

// mustInit is a client with a fresh session.
func mustInit(t *testing.T, url string) *client {
	t.Helper()
	c := newClient(t, url)
	resp := c.post("initialize", map[string]any{"protocolVersion": "2025-11-25"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: status %d", resp.StatusCode)
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	a := readAnswer(t, resp)
	var res initializeResult
	a.result(t, &res)
	c.version = res.ProtocolVersion
	return c
}

// status sends a session-scoped request and returns only its status (and
// body), as a probe does.
func (c *client) status(method string) (int, string) {
	c.t.Helper()
	resp := c.post(method, nil)
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// get opens a GET on the session, with a cursor if lastEventID is not "".
func (c *client) get(lastEventID string, extra ...string) *http.Response {
	c.t.Helper()
	if lastEventID != "" {
		extra = append([]string{"Last-Event-ID", lastEventID}, extra...)
	}
	return c.request(http.MethodGet, "", extra...)
}

// sseEvent is one parsed SSE event, or a comment.
type sseEvent struct {
	id, data, retry string
	comment         string // set for a comment line, e.g. ": ping"
}

func (e sseEvent) ID(t *testing.T) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(e.id, 10, 64)
	if err != nil {
		t.Fatalf("event id %q: %v", e.id, err)
	}
	return n
}

// scanSSE parses SSE from r, calling emit for each event and comment, until
// EOF or emit returns false.
func scanSSE(r io.Reader, emit func(sseEvent) bool) {
	sc := bufio.NewScanner(r)
	var ev sseEvent
	started := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if started && !emit(ev) {
				return
			}
			ev, started = sseEvent{}, false
		case strings.HasPrefix(line, ":"):
			if !emit(sseEvent{comment: line}) {
				return
			}
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				ev.id = value
			case "retry":
				ev.retry = value
			case "data":
				if ev.data != "" {
					ev.data += "\n"
				}
				ev.data += value
			}
			started = true
		}
	}
}

func parseSSE(s string) []sseEvent {
	var evs []sseEvent
	scanSSE(strings.NewReader(s), func(e sseEvent) bool { evs = append(evs, e); return true })
	return evs
}

// stream reads an open SSE response in the background.
type stream struct {
	t      *testing.T
	resp   *http.Response
	events chan sseEvent // closed at EOF
}

func openStream(t *testing.T, resp *http.Response) *stream {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET: status %d, body %q", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("GET: content type %q", ct)
	}
	s := &stream{t: t, resp: resp, events: make(chan sseEvent)}
	stop := make(chan struct{})
	go func() {
		defer close(s.events)
		scanSSE(resp.Body, func(e sseEvent) bool {
			select {
			case s.events <- e:
				return true
			case <-stop:
				return false
			}
		})
	}()
	t.Cleanup(func() {
		close(stop)
		resp.Body.Close()
	})
	return s
}

// next is the next event or comment; it fails at EOF.
func (s *stream) next() sseEvent {
	s.t.Helper()
	return s.nextBy(time.After(waitLimit))
}

func (s *stream) nextBy(deadline <-chan time.Time) sseEvent {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			s.t.Fatal("stream ended")
		}
		return e
	case <-deadline:
		s.t.Fatal("no event in time")
	}
	return sseEvent{}
}

// message is the next event that carries data, skipping comments and
// priming events.
func (s *stream) message() sseEvent {
	s.t.Helper()
	deadline := time.After(waitLimit)
	for {
		if e := s.nextBy(deadline); e.data != "" {
			return e
		}
	}
}

// ends waits for EOF, skipping anything before it.
func (s *stream) ends() {
	s.t.Helper()
	timeout := time.After(waitLimit)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-timeout:
			s.t.Fatal("stream did not end")
		}
	}
}

// drop closes the connection, as a load balancer's idle timeout would.
func (s *stream) drop() { s.resp.Body.Close() }

// notificationSeq decodes a notifications/message and returns its seq.
func notificationSeq(t *testing.T, data string) uint64 {
	t.Helper()
	msg, err := jsonrpc.DecodeMessage([]byte(data))
	if err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "notifications/message" {
		t.Fatalf("want notifications/message, got %s", data)
	}
	var p struct {
		Level  string `json:"level"`
		Logger string `json:"logger"`
		Data   struct {
			Seq uint64 `json:"seq"`
		} `json:"data"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		t.Fatalf("params of %s: %v", data, err)
	}
	if p.Level != "info" || p.Logger != ServerName {
		t.Fatalf("notification params %s", req.Params)
	}
	return p.Data.Seq
}
