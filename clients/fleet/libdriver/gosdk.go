package libdriver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// The Go SDK's client (github.com/modelcontextprotocol/go-sdk, mcp.NewClient with a
// StreamableClientTransport) as a client library: what happens after a drop is whatever that
// client does (its own reconnects with Last-Event-ID, its own error on a dead session).
// mcpchaos only plays the application around it (Driver, lib.go): it calls tools,
// and when a call fails it reports a tool failure, or, when the SDK says the session is
// missing (mcp.ErrSessionMissing) or has closed the session, connects anew, as an application
// would. Such a group has no Policy: the SDK decides.
//
// Everything is measured from outside, on the HTTP requests the SDK sends (sdkObserver), with
// the same metrics as the other kinds wherever they can be seen there; sdkNotObservable names
// the ones that cannot. The other libraries share the observer and the application.

// sdkVersion is the Go SDK module version in go.mod, recorded in the export.
const sdkVersion = "v1.8.0"

// sdkNotObservable are the metrics a library group cannot be measured on: which requests the
// library meant as retries, whether it resynchronised, and it never probes.
var sdkNotObservable = []string{"retries_against_dead", "resyncs", "probe_latency"}

// gosdkConn is one Go SDK client session.
type gosdkConn struct {
	cs      *mcp.ClientSession
	timeout time.Duration
	done    chan struct{} // closed when the SDK has ended the session (cs.Wait returned)
}

// openGoSDK connects a Go SDK session through the group's proxy, pinned to the group's
// protocol (the SDK offers the stateless 2026-07-28 revision first otherwise).
func openGoSDK(ctx context.Context, c *client) (libConn, error) {
	c.d.noteLibrary("github.com/modelcontextprotocol/go-sdk", sdkVersion)
	ep := c.e.EP
	hc := &http.Client{Transport: &sdkObserver{base: ep.HTTP.Transport, c: c}, CheckRedirect: ep.HTTP.CheckRedirect}
	client := mcp.NewClient(&mcp.Implementation{Name: ep.ClientName, Version: "1"}, nil)
	opts := c.e.LibraryOptions
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ep.URL, HTTPClient: hc, MaxEventSize: ep.MaxEvent,
		MaxRetries: sdkMaxRetries(opts), DisableStandaloneSSE: optTrue(opts, "DisableStandaloneSSE")},
		&mcp.ClientSessionOptions{ProtocolVersion: ep.Protocol})
	if err != nil {
		return nil, err
	}
	g := &gosdkConn{cs: cs, timeout: ep.RequestTimeout, done: make(chan struct{})}
	go func() {
		_ = cs.Wait() // returns when the SDK closes the session: a failure it will not retry
		close(g.done)
	}()
	return g, nil
}

func (g *gosdkConn) sessionID() string      { return g.cs.ID() }
func (g *gosdkConn) ended() <-chan struct{} { return g.done }

func (g *gosdkConn) protocol() string {
	if r := g.cs.InitializeResult(); r != nil {
		return r.ProtocolVersion
	}
	return ""
}

// close ends the session: the SDK sends the DELETE, unless it knows the session is missing.
func (g *gosdkConn) close() {
	_ = g.cs.Close()
	<-g.done
}

func (g *gosdkConn) list(ctx context.Context) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	res, err := g.cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// call is one tool call through the SDK session, under the application's timeout (the
// group's request_timeout: the SDK sets none of its own).
func (g *gosdkConn) call(ctx context.Context, tool string, args any, progress string) libOutcome {
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if progress != "" {
		p.SetProgressToken(progress)
	}
	cctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	o := libOutcome{sent: time.Now(), timeout: g.timeout}
	res, err := g.cs.CallTool(cctx, p)
	o.took = time.Since(o.sent)
	if err == nil {
		o.isError = res.IsError
		return o
	}
	o.err, o.answered = err, sdkAnswered(err)
	o.gone = errors.Is(err, mcp.ErrSessionMissing)
	o.misclassified = !o.gone
	o.timedOut = cctx.Err() != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded)
	o.class = sdkClass(err, o)
	if o.gone {
		o.then = g.next(ctx)
	}
	return o
}

// next is what a plain application, one that keeps its session after ErrSessionMissing (the
// SDK's documentation says the session is then gone, and nothing more), gets from its next
// request: the SDK has closed the session, and every later request fails at once, in the
// client, with jsonrpc2's "client is closing" (code -32003) inside an ErrConnectionClosed,
// an error that ErrSessionMissing does not match. mcpchaos's application connects anew on
// the signal, which would hide this from the row; the class is recorded beside the signal's.
// It is asked with tools/list, which the closing SDK refuses without sending anything.
func (g *gosdkConn) next(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := g.cs.ListTools(ctx, nil)
	if err == nil {
		return "" // the SDK served it: a plain application would go on
	}
	return sdkClass(err, libOutcome{answered: sdkAnswered(err), gone: errors.Is(err, mcp.ErrSessionMissing)})
}

// clientClosing is jsonrpc2's ErrClientClosing: a request refused by the SDK itself, the
// session closed, never sent. It is a jsonrpc.Error, but no server's answer.
const clientClosing = -32003

// The SDK passes it on as a jsonrpc.Error, or (from a closed connection) as ErrConnectionClosed
// with its words only (`connection closed: calling "tools/list": client is closing: sending
// "tools/call": failed to connect (session ID: …): session not found`).
func isClientClosing(err error) bool {
	we := (*jsonrpc.Error)(nil)
	return (errors.As(err, &we) && we.Code == clientClosing) || strings.Contains(err.Error(), ": client is closing")
}

// sdkAnswered says whether err is an answer of the server (a JSON-RPC error object).
func sdkAnswered(err error) bool {
	we := (*jsonrpc.Error)(nil)
	return errors.As(err, &we) && !isClientClosing(err)
}

// sdkClass names a Go SDK error for the export.
func sdkClass(err error, o libOutcome) string {
	switch {
	case o.gone:
		return "ErrSessionMissing"
	case isClientClosing(err) && errors.Is(err, mcp.ErrConnectionClosed):
		return "ErrConnectionClosed(client is closing)"
	case errors.Is(err, mcp.ErrConnectionClosed):
		return "ErrConnectionClosed"
	case isClientClosing(err):
		return "client is closing"
	case o.timedOut:
		return "context.DeadlineExceeded"
	case o.answered:
		return "jsonrpc.Error"
	}
	return "other"
}

// sdkObserver watches every HTTP request a gosdk client's SDK session sends, to measure it
// from outside: replays and their answers, drops of its GET stream, requests carrying a dead
// session's id, events delivered from a dead session.
type sdkObserver struct {
	base http.RoundTripper
	c    *client
}

func (o *sdkObserver) RoundTrip(req *http.Request) (*http.Response, error) {
	c := o.c
	id := req.Header.Get("Mcp-Session-Id")
	h := c.held(id)
	if h != nil && h.Replaced.Load() {
		c.e.Rec.Inc(metrics.ReinitCollisions)
	}
	cursor := req.Header.Get("Last-Event-ID")
	stream := req.Method == http.MethodGet
	sent := time.Now()
	resp, err := o.base.RoundTrip(req)
	if h == nil && id == "" && err == nil && req.Method == http.MethodPost && resp.StatusCode == http.StatusOK {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			c.prepare(sid) // initialize: the session exists from here on (see sdkPrepare)
		}
	}
	if h == nil {
		return resp, err // initialize, or a request of no session of ours
	}
	status := 0
	if err == nil {
		status = resp.StatusCode
	} else if req.Context().Err() == nil {
		c.e.Books.Failed(err)
	}
	switch {
	case stream && cursor != "":
		c.mu.Lock()
		noticed := c.dropAt
		c.mu.Unlock()
		if err == nil && !noticed.IsZero() {
			c.e.Rec.Record(metrics.ReconnectLatency, c.Index(), time.Since(noticed))
		}
		switch {
		case status == http.StatusOK:
			c.e.Rec.Inc(metrics.ReplaysOK)
		case c.e.Dead(status):
			c.e.Rec.Inc(metrics.ReplaysDead)
			c.Account(h.Held, sent, status, false)
		case err == nil && status != http.StatusConflict: // a 409 refuses the stream, not the cursor
			c.e.Rec.Inc(metrics.ReplaysUnknownCursor)
		}
	case stream:
		if c.e.Dead(status) {
			c.Account(h.Held, sent, status, false)
		}
	case req.Method == http.MethodPost:
		if status/100 == 2 {
			c.e.Served(h.S)
		}
		c.Account(h.Held, sent, status, false)
	}
	c.libSaw(h, req.Method, cursor != "", sent, status)
	if stream {
		c.StreamAnswered(h.Held, status, cursor != "")
	}
	if stream && status == http.StatusOK {
		h.lib.getsOpen.Add(1)
		resp.Body = &sdkStreamBody{ReadCloser: resp.Body, c: c, h: h, opened: time.Now()}
	} else if status == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &cutWatch{ReadCloser: resp.Body, h: h} // a call's stream: its cut matters to the call
	}
	return resp, err
}

// held finds this client's session by id.
func (c *client) held(id string) *libHeld {
	if id == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byID[id]
}

// sdkStreamBody counts the events a GET stream delivers to the SDK (stale if their session
// is dead) and notices when the stream ends while the session is still held: a drop.
type sdkStreamBody struct {
	io.ReadCloser
	c       *client
	h       *libHeld
	hasData bool // the current event has a non-empty data line
	line    []byte
	once    sync.Once
	opened  time.Time // when the stream's response came (see Client.apply)
}

func (b *sdkStreamBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.h.lib.cut()
	}
	for _, ch := range p[:n] {
		if ch == '\n' || ch == '\r' {
			b.endLine()
			continue
		}
		if len(b.line) < 8 {
			b.line = append(b.line, ch)
		}
	}
	if err != nil {
		b.ended()
	}
	return n, err
}

func (b *sdkStreamBody) endLine() {
	switch {
	case len(b.line) == 0 && b.hasData: // blank line: the event is complete
		b.c.Apply(b.h.Held, 1, b.opened)
		b.hasData = false
	case len(b.line) > len("data:") && string(b.line[:5]) == "data:":
		b.hasData = true
	}
	b.line = b.line[:0]
}

func (b *sdkStreamBody) Close() error {
	b.ended()
	return b.ReadCloser.Close()
}

// ended counts a drop when a stream ends while the client still holds its session.
func (b *sdkStreamBody) ended() {
	b.once.Do(func() {
		b.h.lib.getEnded()
		if b.h.Ctx.Err() != nil {
			return
		}
		b.c.e.Rec.Inc(metrics.Drops)
		b.c.mu.Lock()
		b.c.dropAt = time.Now()
		b.c.mu.Unlock()
	})
}

// sdkMaxRetries is the group's MaxRetries as the SDK reads it: unset is 0 (its default, 5), and
// a group's 0 (no retries) is the SDK's negative.
func sdkMaxRetries(opts map[string]any) int {
	if _, set := opts["MaxRetries"]; !set {
		return 0
	}
	if n := optInt(opts, "MaxRetries", 0); n > 0 {
		return n
	}
	return -1
}
