package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/clients"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Client kinds a measurement can hold.
const (
	Lean  = "mcpchaos" // this tool's own session client, held by its fleet
	GoSDK = "gosdk"    // the official Go SDK client (StreamableClientTransport)
)

// Options say what one measurement does.
type Options struct {
	Client   string // Lean or GoSDK
	URL      string // the target's MCP endpoint (loopback)
	Sessions int
	Rounds   int  // rounds of one tools/call per session
	Probes   int  // probes (and as many bare round trips) timed on one session
	NoProxy  bool // talk to the target directly instead of through embedded Toxiproxy
	Workers  int  // concurrent establishments and calls
}

// Result is one measurement. Per-session figures divide by Sessions.
type Result struct {
	Client           string  `json:"client"`
	Sessions         int     `json:"sessions"`
	Proxied          bool    `json:"proxied"`
	EstablishSeconds float64 `json:"establish_seconds"`
	EstablishPerSec  float64 `json:"establish_per_second"`
	RSSBytes         int64   `json:"rss_growth_bytes"`
	HeapBytes        int64   `json:"heap_and_stack_growth_bytes"`
	Goroutines       int     `json:"goroutines_growth"`
	ProxyGoroutines  int     `json:"proxy_goroutines"`
	ServerGoroutines int     `json:"server_goroutines,omitempty"` // an in-process server's (tests only)
	FDs              int     `json:"fds_growth"`
	Calls            int     `json:"calls"`
	CallErrors       int     `json:"call_errors"`
	CPUPerCallUS     float64 `json:"cpu_per_call_us"`
	ProbeP50US       int64   `json:"probe_p50_us"`
	BareP50US        int64   `json:"bare_round_trip_p50_us"`
	Protocol         string  `json:"protocol"`
}

// Per-session views of a result.
func (r Result) RSSPerSession() float64 { return float64(r.RSSBytes) / float64(r.Sessions) }
func (r Result) GoroutinesPerSession() float64 {
	return float64(r.Goroutines-r.ProxyGoroutines-r.ServerGoroutines) / float64(r.Sessions)
}
func (r Result) FDsPerSession() float64 { return float64(r.FDs) / float64(r.Sessions) }

// holder is a set of held sessions of one client kind.
type holder interface {
	call(ctx context.Context, i int) error
	ping(ctx context.Context) (time.Duration, error)
	sessionID() string
	protocol() string
	close()
}

// Run performs one measurement in this process and hands the result to report while the
// sessions are still held.
func Run(ctx context.Context, o Options, report func(*Result) error) error {
	r, h, cleanup, err := run(ctx, o)
	if cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		return err
	}
	defer h.close()
	return report(r)
}

func run(ctx context.Context, o Options) (_ *Result, _ holder, cleanup func(), _ error) {
	if o.Workers <= 0 {
		o.Workers = 64
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, nil, nil, err
	}
	if ip := hostIP(u.Host); ip == "" {
		return nil, nil, nil, fmt.Errorf("bench talks to loopback targets only, not %s", u.Host)
	}
	endpoint := o.URL
	if !o.NoProxy {
		inj, err := faults.NewEmbedded()
		if err != nil {
			return nil, nil, nil, err
		}
		cleanup = func() { inj.Close() }
		listen, err := inj.AddProxy(ctx, "bench", u.Host)
		if err != nil {
			return nil, nil, cleanup, err
		}
		endpoint = (&url.URL{Scheme: "http", Host: listen, Path: u.Path}).String()
	}

	r := &Result{Client: o.Client, Sessions: o.Sessions, Proxied: !o.NoProxy}
	before := sample()
	t0 := time.Now()
	var h holder
	switch o.Client {
	case Lean:
		h, err = holdLean(ctx, endpoint, o)
	case GoSDK:
		h, err = holdSDK(ctx, endpoint, o)
	default:
		err = fmt.Errorf("unknown client kind %q (want %s or %s)", o.Client, Lean, GoSDK)
	}
	if err != nil {
		return nil, nil, cleanup, err
	}
	r.EstablishSeconds = time.Since(t0).Seconds()
	r.EstablishPerSec = float64(o.Sessions) / r.EstablishSeconds
	r.Protocol = h.protocol()
	held := sample()
	r.RSSBytes = held.rss - before.rss
	r.HeapBytes = held.heap - before.heap
	r.Goroutines = held.goroutines - before.goroutines
	r.ProxyGoroutines = held.proxyGoroutines - before.proxyGoroutines
	r.ServerGoroutines = held.serverGoroutines - before.serverGoroutines
	r.FDs = held.fds - before.fds

	cpu0 := cpuTime()
	var calls, fails atomic.Int64
	for range o.Rounds {
		parallel(o.Sessions, o.Workers, func(i int) {
			if err := h.call(ctx, i); err != nil {
				fails.Add(1)
			}
			calls.Add(1)
		})
	}
	r.Calls, r.CallErrors = int(calls.Load()), int(fails.Load())
	if r.Calls > 0 {
		r.CPUPerCallUS = float64((cpuTime() - cpu0).Microseconds()) / float64(r.Calls)
	}
	r.ProbeP50US, r.BareP50US, err = probeVsBare(ctx, h, endpoint, o.Probes)
	if err != nil {
		h.close()
		return nil, nil, cleanup, err
	}
	return r, h, cleanup, nil
}

// probeVsBare times probes through the client and bare HTTP POSTs of the same ping with the
// same session id, alternating, on an otherwise idle process; it returns both medians.
func probeVsBare(ctx context.Context, h holder, endpoint string, n int) (probeP50, bareP50 int64, err error) {
	if n <= 0 {
		return 0, 0, nil
	}
	rec := metrics.NewGroup("bench", "probe", 1)
	bare := metrics.NewHistogram()
	hc := &http.Client{Transport: clients.NewTransport(4)}
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
	sessions []*clients.Session
	rec      *metrics.Group
}

func holdLean(ctx context.Context, endpoint string, o Options) (holder, error) {
	ep := &clients.Endpoint{
		URL:            endpoint,
		HTTP:           &http.Client{Transport: clients.Streaming(clients.NewTransport(o.Workers * 2))},
		Protocol:       clients.Protocol20251125,
		RequestTimeout: 30 * time.Second,
		MaxBody:        4 << 20,
		MaxEvent:       1 << 20,
		ClientName:     "mcpchaos-bench",
	}
	pol, _ := clients.NewPolicy("probe", clients.PolicyConfig{Retries: 3})
	rec := metrics.NewGroup("bench", "probe", o.Sessions)
	f := clients.NewFleet(clients.GroupConfig{
		Name: "bench", Clients: o.Sessions, Policy: pol, Probe: "ping", DeadStatuses: []int{404, 410},
		RetryBackoff: 50 * time.Millisecond, CallEvery: time.Hour, Tool: "echo", Concurrency: 1,
	}, ep, rec, clients.TruthFunc(func(string) (time.Time, bool) { return time.Time{}, false }),
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
	waitStreams(endpoint)
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
	start := time.Now()
	rep, err := h.sessions[0].Ping(ctx)
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

func holdSDK(ctx context.Context, endpoint string, o Options) (holder, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = o.Workers * 2
	tr.MaxIdleConns = o.Workers * 2
	hc := &http.Client{Transport: tr}
	client := mcp.NewClient(&mcp.Implementation{Name: "gosdk-bench", Version: "1"}, nil)
	h := &sdkHolder{sessions: make([]*mcp.ClientSession, o.Sessions), hc: hc}
	var mu sync.Mutex
	var firstErr error
	parallel(o.Sessions, o.Workers, func(i int) {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc},
			&mcp.ClientSessionOptions{ProtocolVersion: clients.Protocol20251125})
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
	waitStreams(endpoint)
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

// --- measuring the process ---------------------------------------------------------------

type procSample struct {
	rss, heap                   int64
	goroutines, proxyGoroutines int
	serverGoroutines            int
	fds                         int
}

// sample reads the process after a GC has settled the heap and freed memory has gone back to
// the OS, so that RSS shows what the held sessions keep, not the garbage of establishing them
// (the same for every client kind).
func sample() procSample {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := procSample{heap: int64(ms.HeapInuse + ms.StackInuse), goroutines: runtime.NumGoroutine()}
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range strings.Lines(string(data)) {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				s.rss = kb << 10
			}
		}
	}
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		s.fds = len(ents)
	}
	s.proxyGoroutines = countGoroutines("toxiproxy")
	// An HTTP server in this process (the reference server, in tests) is not the client's.
	s.serverGoroutines = countGoroutines("net/http.(*conn).serve", "net/http.(*connReader).backgroundRead", "mcpchaos/target.")
	return s
}

// countGoroutines counts goroutines whose stack mentions any of marks.
func countGoroutines(marks ...string) int {
	buf := make([]byte, 64<<20)
	n := runtime.Stack(buf, true)
	count := 0
	for g := range bytes.SplitSeq(buf[:n], []byte("\n\n")) {
		for _, m := range marks {
			if bytes.Contains(g, []byte(m)) {
				count++
				break
			}
		}
	}
	return count
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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

// waitStreams gives the GET streams a moment to be answered before memory is read: both
// clients open them asynchronously after initialize. A short bounded settle, not a
// synchronisation: the figures are read after it, whatever it finds.
func waitStreams(string) { time.Sleep(500 * time.Millisecond) }

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
