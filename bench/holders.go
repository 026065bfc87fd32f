package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/wire"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// holder is a set of held sessions of one client kind.
type holder interface {
	call(ctx context.Context, i int) error
	ping(ctx context.Context) (time.Duration, error)
	sessionID() string
	protocol() string
	close()
}

// probeVsBare times probes through the client and bare HTTP POSTs of the same ping with the
// same session id, alternating, on an otherwise idle process; it returns both medians.
func probeVsBare(ctx context.Context, h holder, endpoint string, n int) (probeP50, bareP50 int64, err error) {
	if n <= 0 {
		return 0, 0, nil
	}
	rec := metrics.NewRecorder("bench", "probe", 1)
	bare := metrics.NewHistogram()
	hc := &http.Client{Transport: wire.NewTransport(4)}
	defer hc.CloseIdleConnections()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	for range n {
		d, err := h.ping(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("probe: %w", err)
		}
		rec.Record(metrics.ProbeLatency, 0, d)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", h.sessionID())
		req.Header.Set("MCP-Protocol-Version", h.protocol())
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return 0, 0, fmt.Errorf("bare round trip: %w", err)
		}
		var buf [4096]byte
		for {
			if _, err := resp.Body.Read(buf[:]); err != nil {
				break
			}
		}
		resp.Body.Close()
		_ = bare.RecordValue(max(time.Since(start).Microseconds(), 1))
	}
	return rec.Snapshot().Hist(metrics.ProbeLatency).ValueAtQuantile(50), bare.ValueAtQuantile(50), nil
}

// --- this tool's client, held by its own fleet -------------------------------------------

type leanHolder struct {
	cancel   context.CancelFunc
	done     chan struct{}
	sessions []*wire.Session
	rec      *metrics.Recorder
}

// prepareLean sets up what the fleet needs whatever its size (transport, policy, recorder);
// the function it returns establishes the sessions.
func prepareLean(endpoint string, o Options, n *counts) func(context.Context) (holder, error) {
	tr := wire.NewTransport(o.Workers * 2)
	n.countDials(tr, o.Via)
	ep := &wire.Endpoint{
		URL:            endpoint,
		HTTP:           &http.Client{Transport: n.countStreams(bound(wire.Streaming(tr), o.Workers))},
		Protocol:       wire.Protocol20251125,
		RequestTimeout: 30 * time.Second,
		MaxBody:        wire.MaxBody,
		MaxEvent:       wire.MaxEvent,
		ClientName:     "mcpchaos-bench",
	}
	pol, _ := policy.New("probe", policy.Config{Retries: 3})
	rec := metrics.NewRecorder("bench", "probe", o.Sessions)
	return func(ctx context.Context) (holder, error) { return holdLean(ctx, o, ep, pol, rec) }
}

func holdLean(ctx context.Context, o Options, ep *wire.Endpoint, pol policy.Policy, rec *metrics.Recorder) (holder, error) {
	f := fleet.New(fleet.GroupConfig{
		Name: "bench", Clients: o.Sessions, Policy: pol, Probe: "ping", DeadStatuses: []int{404, 410},
		RetryBackoff: 50 * time.Millisecond, CallEvery: time.Hour, Tool: "echo", Concurrency: 1,
	}, ep, rec, truth.Func(func(string) (time.Time, bool) { return time.Time{}, false }),
		func(time.Duration) bool { return false }) // the bench drives the calls itself
	runCtx, cancel := context.WithCancel(ctx)
	h := &leanHolder{cancel: cancel, done: make(chan struct{}), rec: rec}
	go func() { f.Run(runCtx, time.Now()); close(h.done) }()
	// Wait until every client holds a live session with its GET stream open (bounded).
	deadline := time.Now().Add(2 * time.Minute)
	for f.Census().Live < o.Sessions || rec.Get(metrics.SessionsStarted) < int64(o.Sessions) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			h.close()
			return nil, fmt.Errorf("only %d of %d sessions established", f.Census().Live, o.Sessions)
		}
		time.Sleep(5 * time.Millisecond) // a bounded poll of the fleet's census
	}
	h.sessions = f.Sessions()
	return h, nil
}

func (h *leanHolder) call(ctx context.Context, i int) error {
	rep, err := h.sessions[i%len(h.sessions)].CallTool(ctx, "echo", map[string]any{"text": "bench"})
	if err == nil && !rep.OK() {
		err = fmt.Errorf("status %d", rep.Status)
	}
	return err
}

func (h *leanHolder) ping(ctx context.Context) (time.Duration, error) {
	return timedPing(ctx, h.sessions[0])
}

// timedPing times one ping of mcpchaos's own on s, a refusal counted as an error.
func timedPing(ctx context.Context, s *wire.Session) (time.Duration, error) {
	start := time.Now()
	rep, err := s.Ping(ctx)
	d := time.Since(start)
	if err == nil && !rep.OK() {
		err = fmt.Errorf("status %d", rep.Status)
	}
	return d, err
}

func (h *leanHolder) sessionID() string { return h.sessions[0].ID }
func (h *leanHolder) protocol() string  { return h.sessions[0].Protocol }
func (h *leanHolder) close()            { h.cancel(); <-h.done }

// --- the official Go SDK client ----------------------------------------------------------

type sdkHolder struct {
	sessions []*mcp.ClientSession
	hc       *http.Client
}

// prepareSDK sets up the client and its transport; the function it returns establishes the
// sessions.
func prepareSDK(endpoint string, o Options, n *counts) func(context.Context) (holder, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = o.Workers * 2
	tr.MaxIdleConns = o.Workers * 2
	n.countDials(tr, o.Via)
	hc := &http.Client{Transport: n.countStreams(tr)}
	client := mcp.NewClient(&mcp.Implementation{Name: "gosdk-bench", Version: "1"}, nil)
	return func(ctx context.Context) (holder, error) { return holdSDK(ctx, endpoint, o, hc, client) }
}

func holdSDK(ctx context.Context, endpoint string, o Options, hc *http.Client, client *mcp.Client) (holder, error) {
	h := &sdkHolder{sessions: make([]*mcp.ClientSession, o.Sessions), hc: hc}
	var mu sync.Mutex
	var firstErr error
	parallel(o.Sessions, o.Workers, func(i int) {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc},
			&mcp.ClientSessionOptions{ProtocolVersion: wire.Protocol20251125})
		mu.Lock()
		defer mu.Unlock()
		if err != nil && firstErr == nil {
			firstErr = err
		}
		h.sessions[i] = cs
	})
	if firstErr != nil {
		h.close()
		return nil, fmt.Errorf("go-sdk connect: %w", firstErr)
	}
	return h, nil
}

func (h *sdkHolder) call(ctx context.Context, i int) error {
	res, err := h.sessions[i%len(h.sessions)].CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "bench"}})
	if err == nil && res.IsError {
		err = errors.New("tool error")
	}
	return err
}

func (h *sdkHolder) ping(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	err := h.sessions[0].Ping(ctx, nil)
	return time.Since(start), err
}

func (h *sdkHolder) sessionID() string { return h.sessions[0].ID() }
func (h *sdkHolder) protocol() string  { return h.sessions[0].InitializeResult().ProtocolVersion }

func (h *sdkHolder) close() {
	parallel(len(h.sessions), 64, func(i int) {
		if h.sessions[i] != nil {
			h.sessions[i].Close()
		}
	})
	h.hc.CloseIdleConnections()
}

// counts is what the measuring process counts of its client's connections, from outside the
// client (its transport), the same way for every kind that has one.
type counts struct {
	dials   atomic.Int64 // TCP connections opened so far
	streams atomic.Int64 // SSE streams opened so far (answered 2xx)
}

// countDials counts the TCP connections tr opens: a connection a pool does not keep is
// dialed again, and the garbage of each dial (buffers, connection state) is part of what
// establishing a session costs. With via, the dials go to via's addresses in turn instead of
// the address asked for (Options.Via): nothing above the dial knows, so the client and its
// pool are the same as with one proxy.
func (n *counts) countDials(tr *http.Transport, via []string) {
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		i := n.dials.Add(1)
		if len(via) > 0 {
			addr = via[int(i)%len(via)]
		}
		return dial(ctx, network, addr)
	}
}

// countStreams counts the GET streams opened through rt. Both clients open a session's GET
// stream after initialize returns, on a goroutine of their own, so "initialized" is not yet
// "held": a reading taken before every stream is open catches establishments half done (their
// buffers, their deep stacks), and under load it did (15.0 KiB in one run of four, with 1,245
// of 3,000 streams still opening, 12.1–12.8 in the others). It counts openings only and keeps
// nothing of the stream (no wrapped body), so that it adds nothing to what a session holds;
// nothing in the benchmark closes a stream before the reading.
func (n *counts) countStreams(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && req.Method == http.MethodGet && resp.StatusCode/100 == 2 &&
			strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			n.streams.Add(1)
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// awaitStreams waits (bounded) until want streams have opened; it says how many have.
func (n *counts) awaitStreams(ctx context.Context, want int64, bound time.Duration) int64 {
	deadline := time.Now().Add(bound)
	for n.streams.Load() < want && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond) // a bounded poll of a counter
	}
	return n.streams.Load()
}

// bounded lets at most n POSTs be in flight at once, each from its sending to its body's close,
// as parallel bounds the Go SDK client's establishments and both clients' calls. The fleet
// starts every client at once; unbounded, its establishments would overflow the pool of
// 2×Workers connections, and every connection the pool cannot keep is dialed again.
type bounded struct {
	rt    http.RoundTripper
	slots chan struct{}
}

func bound(rt http.RoundTripper, n int) http.RoundTripper {
	return &bounded{rt: rt, slots: make(chan struct{}, n)}
}

func (b *bounded) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost {
		return b.rt.RoundTrip(req)
	}
	select {
	case b.slots <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	resp, err := b.rt.RoundTrip(req)
	if err != nil {
		<-b.slots
		return nil, err
	}
	resp.Body = &releasing{ReadCloser: resp.Body, release: sync.OnceFunc(func() { <-b.slots })}
	return resp, nil
}

// releasing gives its slot back when the body is closed.
type releasing struct {
	io.ReadCloser
	release func()
}

func (r *releasing) Close() error {
	defer r.release()
	return r.ReadCloser.Close()
}

// parallel calls fn(i) for i in [0, n) on at most workers goroutines.
func parallel(n, workers int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

func hostIP(hostport string) string {
	host := hostport
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
		host = hostport[:i]
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1" {
		return host
	}
	return ""
}
