package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// sdkDriver runs a group's clients as real sessions of the official Go SDK's client
// (github.com/modelcontextprotocol/go-sdk, mcp.NewClient with a StreamableClientTransport):
// what happens after a drop is whatever that client does (its own reconnects with
// Last-Event-ID, its own error on a dead session). mcpchaos only plays the application around
// it: it calls tools, and when a call fails it reports a tool failure, or, when the SDK says
// the session is missing (mcp.ErrSessionMissing) or has closed the session, connects anew, as
// an application would. Such a group has no Policy: the SDK decides.
//
// Everything is measured from outside, on the HTTP requests the SDK sends (sdkObserver), with
// the same metrics as the other kinds wherever they can be seen there; notObservable names the
// ones that cannot.
type sdkDriver struct{}

// sdkVersion is the Go SDK module version in go.mod, recorded in the export.
const sdkVersion = "v1.8.0"

// sdkNotObservable are the metrics a gosdk group cannot be measured on: which requests the SDK
// meant as retries, whether it resynchronised, and it never probes.
var sdkNotObservable = []string{"retries_against_dead", "resyncs", "probe_latency"}

func (sdkDriver) notObservable() []string { return slices.Clone(sdkNotObservable) }

func (sdkDriver) hold(ctx context.Context, c *Client, _ *sync.WaitGroup) { c.runSDK(ctx) }

func (sdkDriver) tick(ctx context.Context, c *Client, k int) { c.tickSDK(ctx, k) }

// sdkClient is a gosdk client's state beside its Client.
type sdkClient struct {
	ctx    context.Context // the run's: sessions are held under it
	mu     sync.Mutex
	cs     *mcp.ClientSession
	byID   map[string]*held // this client's sessions, by id: a request names one
	dropAt time.Time        // when the current session's GET stream last ended
	conn   libConn          // the library session of a libDriver client (driver_lib.go)
}

// runSDK connects a Go SDK session, holds it until the application (tickSDK) or the SDK gives
// up on it, and connects anew, until ctx ends.
func (c *Client) runSDK(ctx context.Context) {
	c.mu.Lock()
	if c.sdk == nil {
		c.sdk = &sdkClient{ctx: ctx, byID: make(map[string]*held)}
	}
	c.mu.Unlock()
	c.f.noteLibrary("github.com/modelcontextprotocol/go-sdk", sdkVersion)
	hc := &http.Client{Transport: &sdkObserver{base: c.f.ep.HTTP.Transport, c: c}, CheckRedirect: c.f.ep.HTTP.CheckRedirect}
	client := mcp.NewClient(&mcp.Implementation{Name: c.f.ep.ClientName, Version: "1"}, nil)
	backoff := newBackoff(c.f.cfg.ReconnectDelay, c.f.cfg.ReconnectMax)
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, c.f.ep.RequestTimeout)
		opts := c.f.cfg.LibraryOptions
		cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: c.f.ep.URL, HTTPClient: hc, MaxEventSize: c.f.ep.MaxEvent,
			MaxRetries: sdkMaxRetries(opts), DisableStandaloneSSE: optTrue(opts, "DisableStandaloneSSE")},
			// Pinned: the SDK offers the stateless 2026-07-28 revision first otherwise.
			&mcp.ClientSessionOptions{ProtocolVersion: c.f.ep.Protocol})
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				c.f.failed(err)
			}
			sleep.For(ctx, backoff.next())
			continue
		}
		backoff.reset()
		h := c.adoptSDK(cs)
		ended := make(chan struct{})
		go func() {
			_ = cs.Wait() // returns when the SDK closes the session: a failure it will not retry
			close(ended)
		}()
		select {
		case <-h.ctx.Done(): // the application gave up on it, or the run ended
		case <-ended:
			// The SDK ended the session by itself (its stream could not be resumed, or the
			// server said the session is gone): the application connects anew.
			h.lib.surfaced.Store(true)
			c.abandon(h, c.deadNow(h), true)
		}
		if ctx.Err() != nil {
			// Settle and end it politely; finish must not DELETE it a second time.
			c.mu.Lock()
			if c.cur == h {
				c.cur = nil
			}
			c.mu.Unlock()
			c.settle(h, time.Now())
		}
		c.judgeListener(h, time.Now())
		_ = cs.Close() // the SDK sends the DELETE, unless it knows the session is missing
		<-ended
	}
}

// sdkPrepare registers the session the server named in its answer to the SDK's initialize,
// before Connect returns: the SDK opens its first GET stream inside Connect, and that stream
// belongs to the session as much as any later request. Old sessions are marked replaced.
func (c *Client) sdkPrepare(id string) *held {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.sdk.byID[id]; h != nil {
		return h
	}
	h := &held{s: c.f.ep.Adopt(id)}
	h.ctx, h.cancel = context.WithCancel(c.sdk.ctx)
	if c.cur != nil {
		c.cur.replaced.Store(true)
	}
	for _, old := range c.sdk.byID {
		old.replaced.Store(true)
	}
	if len(c.sdk.byID) >= 4 { // old sessions' stragglers are rare after a few re-connects
		clear(c.sdk.byID)
	}
	c.sdk.byID[id] = h
	return h
}

// adoptSDK makes a connected SDK session the client's current one.
func (c *Client) adoptSDK(cs *mcp.ClientSession) *held {
	proto := ""
	if r := cs.InitializeResult(); r != nil {
		proto = r.ProtocolVersion
	}
	h := c.sdkPrepare(cs.ID())
	h.s.Protocol = proto
	c.f.rec.Inc(metrics.SessionsStarted)
	c.f.served(h.s)
	c.f.noteProtocol(proto)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = h
	c.sdk.cs = cs
	c.setStateLocked(metrics.StateLive)
	return h
}

// tickSDK is one application request: a tool call through the SDK session, no retries of our
// own (the SDK's behaviour is what is shown).
func (c *Client) tickSDK(ctx context.Context, _ int) {
	c.mu.Lock()
	h := c.cur
	var cs *mcp.ClientSession
	if c.sdk != nil {
		cs = c.sdk.cs
	}
	live := c.state == metrics.StateLive
	c.mu.Unlock()
	if h == nil || cs == nil || !live {
		c.f.notMade(ctx, c) // reconnecting or re-initializing: the turn passes without a call
		return
	}
	cfg := &c.f.cfg
	args, err := c.f.arguments(ctx, c, func(ctx context.Context) (json.RawMessage, error) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			c.f.failed(err)
			return nil, err
		}
		return json.Marshal(res)
	})
	if err != nil {
		if ctx.Err() == nil {
			c.f.argsFailed(err)
		}
		return
	}
	p := &mcp.CallToolParams{Name: c.f.tool(), Arguments: args}
	if seq := c.calls.Add(1); !cfg.NoProgressTokens {
		p.SetProgressToken(fmt.Sprintf("mcpchaos-%s-%d-%d", cfg.Name, c.idx, seq))
	}
	// The application's timeout (the group's request_timeout): the SDK sets none of its own.
	cctx, cancel := context.WithTimeout(h.ctx, c.f.ep.RequestTimeout)
	defer cancel()
	o := libOutcome{sent: time.Now(), timeout: c.f.ep.RequestTimeout}
	res, err := cs.CallTool(cctx, p)
	o.took = time.Since(o.sent)
	if ctx.Err() != nil || h.ctx.Err() != nil && err != nil {
		return // the run ended, or the session was given up while the call ran
	}
	if err == nil {
		o.isError = res.IsError
		c.judgeCall(ctx, h, o)
		return
	}
	we := (*jsonrpc.Error)(nil)
	o.err, o.answered = err, errors.As(err, &we)
	o.gone = errors.Is(err, mcp.ErrSessionMissing)
	o.misclassified = !o.gone
	o.timedOut = cctx.Err() != nil && errors.Is(err, context.DeadlineExceeded)
	o.class = sdkClass(err, o)
	dead := c.judgeCall(ctx, h, o)
	if !o.gone {
		c.f.failed(err)
	}
	switch {
	case o.gone:
		// The SDK recognised the death (a 404 on a request carrying the session id).
		c.abandon(h, true, true)
	case errors.Is(err, mcp.ErrConnectionClosed):
		c.f.rec.Inc(metrics.ToolCallsFailed)
		c.abandon(h, false, true)
	default:
		c.f.rec.Inc(metrics.ToolCallsFailed)
		if o.answered {
			c.f.refusedCalls.Add(1) // the server refused the call (invalid params, say)
		}
		if dead {
			c.f.rec.Inc(metrics.MisattributedErrors) // a session death reported as a tool failure
		}
	}
}

// sdkClass names a Go SDK error for the export.
func sdkClass(err error, o libOutcome) string {
	switch {
	case o.gone:
		return "ErrSessionMissing"
	case errors.Is(err, mcp.ErrConnectionClosed):
		return "ErrConnectionClosed"
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
	c    *Client
}

func (o *sdkObserver) RoundTrip(req *http.Request) (*http.Response, error) {
	c := o.c
	id := req.Header.Get("Mcp-Session-Id")
	h := c.sdkHeld(id)
	if h != nil && h.replaced.Load() {
		c.f.rec.Inc(metrics.ReinitCollisions)
	}
	cursor := req.Header.Get("Last-Event-ID")
	stream := req.Method == http.MethodGet
	sent := time.Now()
	resp, err := o.base.RoundTrip(req)
	if h == nil && id == "" && err == nil && req.Method == http.MethodPost && resp.StatusCode == http.StatusOK {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			c.sdkPrepare(sid) // initialize: the session exists from here on (see sdkPrepare)
		}
	}
	if h == nil {
		return resp, err // initialize, or a request of no session of ours
	}
	status := 0
	if err == nil {
		status = resp.StatusCode
	} else if req.Context().Err() == nil {
		c.f.failed(err)
	}
	switch {
	case stream && cursor != "":
		c.sdk.mu.Lock()
		noticed := c.sdk.dropAt
		c.sdk.mu.Unlock()
		if err == nil && !noticed.IsZero() {
			c.f.rec.Record(metrics.ReconnectLatency, c.idx, time.Since(noticed))
		}
		switch {
		case status == http.StatusOK:
			c.f.rec.Inc(metrics.ReplaysOK)
		case c.f.dead(status):
			c.f.rec.Inc(metrics.ReplaysDead)
			c.account(h, sent, status, false)
		case err == nil:
			c.f.rec.Inc(metrics.ReplaysUnknownCursor)
		}
	case stream:
		if c.f.dead(status) {
			c.account(h, sent, status, false)
		}
	case req.Method == http.MethodPost:
		if status/100 == 2 {
			c.f.served(h.s)
		}
		c.account(h, sent, status, false)
	}
	c.libSaw(h, req.Method, cursor != "", sent, status)
	if stream && status == http.StatusOK {
		h.lib.getsOpen.Add(1)
		resp.Body = &sdkStreamBody{ReadCloser: resp.Body, c: c, h: h, opened: time.Now()}
	} else if status == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &cutWatch{ReadCloser: resp.Body, h: h} // a call's stream: its cut matters to the call
	}
	return resp, err
}

// sdkHeld finds this client's session by id.
func (c *Client) sdkHeld(id string) *held {
	if id == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sdk == nil {
		return nil
	}
	return c.sdk.byID[id]
}

// sdkStreamBody counts the events a GET stream delivers to the SDK (stale if their session
// is dead) and notices when the stream ends while the session is still held: a drop.
type sdkStreamBody struct {
	io.ReadCloser
	c       *Client
	h       *held
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
		b.c.apply(b.h, 1, b.opened)
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
		if b.h.ctx.Err() != nil {
			return
		}
		b.c.f.rec.Inc(metrics.Drops)
		b.c.sdk.mu.Lock()
		b.c.sdk.dropAt = time.Now()
		b.c.sdk.mu.Unlock()
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
