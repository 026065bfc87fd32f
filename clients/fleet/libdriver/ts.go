package libdriver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/mcpgoworker"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/tsworker"
)

// The ts-sdk and ts-client kinds run the TypeScript SDK's clients in node workers
// (package clients/tsworker starts them and speaks their protocol; this file pools them, one
// per tsworker.ClientsPerWorker clients): each simulated client is one Client + StreamableHTTPClientTransport of the
// library in a worker, made, called and closed by the application loop of lib.go.
//
// The libraries speak HTTP from node, so mcpchaos cannot wrap their transport as it wraps the
// Go libraries'. Instead every worker sends to a gateway of the group's own on loopback (a
// reverse proxy that streams as it reads), which forwards through sdkObserver and the group's
// Toxiproxy proxy: the outside view is the same as the Go libraries', and a fault that cuts the
// upstream connection cuts the worker's connection too (the gateway aborts it rather than
// answering 502, so the library sees the network failure it would see in production).

// workerKind says whether a kind's clients live in worker processes this file pools: the
// TypeScript SDKs' node workers, and mcp-go v1.6.0's worker (clients/mcpgoworker), which
// speaks the same protocol because one Go module cannot hold mcp-go v1.2.1 and v1.6.0.
func workerKind(kind string) bool {
	return kind == policy.ClientTSSDK || kind == policy.ClientTSClient || kind == policy.ClientMCPGo16
}

// workerName names a kind's worker process in problem lines.
func workerName(kind string) string {
	if kind == policy.ClientMCPGo16 {
		return "worker process of mcp-go " + mcpgoworker.Version
	}
	return "node worker of the TypeScript clients"
}

// tsDefaultTimeout is the TypeScript SDKs' default request timeout (DEFAULT_REQUEST_TIMEOUT_MSEC).
const tsDefaultTimeout = 60 * time.Second

// tsPool is a group's node workers and its gateway.
type tsPool struct {
	d       *Driver
	mu      sync.Mutex
	workers []*tsworker.Worker // by client index / tsworker.ClientsPerWorker; nil until needed
	gw      *http.Server
	gwURL   string
	obs     []*sdkObserver // by client index
	stopped bool
	lost    []string // workers that exited while the run went on
}

type tsClientKey struct{}

// tsPool returns the group's pool, made on first use.
func (d *Driver) tsPool() (*tsPool, error) {
	d.lib.mu.Lock()
	defer d.lib.mu.Unlock()
	if d.lib.pool != nil {
		return d.lib.pool, nil
	}
	p := &tsPool{d: d, workers: make([]*tsworker.Worker, (len(d.clients)+tsworker.ClientsPerWorker-1)/tsworker.ClientsPerWorker),
		obs: make([]*sdkObserver, len(d.clients))}
	if err := p.startGateway(); err != nil {
		return nil, err
	}
	d.lib.pool = p
	return p, nil
}

// startGateway serves the group's gateway on a loopback port of its own.
func (p *tsPool) startGateway() error {
	target, err := url.Parse(p.d.e.EP.URL)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("the TypeScript clients' gateway: %w", err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = target.Scheme, target.Host, target.Host
			pr.Out.URL.Path, pr.Out.URL.RawPath = target.Path, target.RawPath
		},
		Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			return p.observer(req.Context().Value(tsClientKey{}).(int)).RoundTrip(req)
		}),
		FlushInterval: -1, // SSE: every event as it comes
		ErrorLog:      log.New(io.Discard, "", 0),
		// A failure upstream (refused, reset) is passed on as what it is: a broken connection.
		ErrorHandler: func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) },
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := strconv.Atoi(r.Header.Get("X-Mcpchaos-Client"))
		if err != nil || c < 0 || c >= len(p.obs) {
			http.Error(w, "not a client of this group", http.StatusBadRequest)
			return
		}
		r.Header.Del("X-Mcpchaos-Client")
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tsClientKey{}, c)))
	})
	p.gw = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	p.gwURL = "http://" + ln.Addr().String() + target.EscapedPath()
	go func() { _ = p.gw.Serve(ln) }()
	return nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (p *tsPool) observer(c int) *sdkObserver {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.obs[c] == nil {
		p.obs[c] = &sdkObserver{base: p.d.e.EP.HTTP.Transport, c: p.d.clients[c]}
	}
	return p.obs[c]
}

// Prepare starts what a group's client kind needs beside its clients before the run's clock
// starts: the node workers of a TypeScript kind (a worker takes a second or more to load its
// library on a busy machine, which would otherwise eat into the first phase). Other kinds
// need nothing. An error means the group cannot run.
func (d *Driver) Prepare(ctx context.Context) error {
	if !workerKind(d.e.Kind) {
		return nil
	}
	p, err := d.tsPool()
	if err != nil {
		return err
	}
	errs := make([]error, len(p.workers))
	var wg sync.WaitGroup
	for i := range p.workers {
		wg.Go(func() { _, errs[i] = p.worker(ctx, i*tsworker.ClientsPerWorker) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// worker returns the worker of client c, started on first use.
func (p *tsPool) worker(ctx context.Context, c int) (*tsworker.Worker, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil, errors.New("the group has ended")
	}
	i := c / tsworker.ClientsPerWorker
	if w := p.workers[i]; w != nil {
		if err := w.ExitedEarly(); err != nil {
			return nil, err
		}
		return w, nil
	}
	start := tsworker.Start
	if p.d.e.Kind == policy.ClientMCPGo16 {
		start = mcpgoworker.Start
	}
	w, err := start(ctx, p.d.e.Kind)
	if err != nil {
		p.lost = append(p.lost, err.Error())
		return nil, err
	}
	p.d.noteLibrary(w.Library(), w.Version())
	p.workers[i] = w
	go p.watch(w, i)
	return w, nil
}

// watch records a worker that exits before the group ends: a problem of the run.
func (p *tsPool) watch(w *tsworker.Worker, i int) {
	<-w.Exited()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		first := i * tsworker.ClientsPerWorker
		last := min(first+tsworker.ClientsPerWorker, len(p.obs)) - 1
		p.lost = append(p.lost, fmt.Sprintf("clients %d..%d: %v", first, last, w.ExitedEarly()))
	}
}

// stop ends the workers and the gateway.
func (p *tsPool) stop() {
	p.mu.Lock()
	p.stopped = true
	ws := p.workers
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range ws {
		if w != nil {
			wg.Go(func() { w.Stop(10 * time.Second) })
		}
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if p.gw.Shutdown(ctx) != nil {
		_ = p.gw.Close()
	}
}

// problems says which workers died while the run went on.
func (p *tsPool) problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.lost))
	for _, l := range p.lost {
		out = append(out, "a "+workerName(p.d.e.Kind)+" died, so their sessions were not measured after it: "+l)
	}
	return out
}

// tsConn is one client's session in a worker.
type tsConn struct {
	w       *tsworker.Worker
	c       int
	id      string
	proto   string
	done    <-chan struct{}
	timeout time.Duration
}

func openTS(ctx context.Context, c *client) (libConn, error) {
	p, err := c.d.tsPool()
	if err != nil {
		return nil, err
	}
	w, err := p.worker(ctx, c.Index())
	if err != nil {
		return nil, err
	}
	opts := c.e.LibraryOptions
	done := w.Ended(c.Index())
	open := tsworker.Msg{Op: "open", C: c.Index(), URL: p.gwURL, Opts: opts, Name: c.e.EP.ClientName}
	timeout := tsDefaultTimeout
	if ms := optInt(opts, "timeout", 0); ms > 0 {
		timeout = time.Duration(ms) * time.Millisecond
	}
	if c.e.Kind == policy.ClientMCPGo16 {
		// mcp-go has no call timeout of its own: the group's request_timeout is the
		// application's, as for v1.2.1 in process; and it is pinned to the group's protocol.
		timeout = c.e.EP.RequestTimeout
		open.TimeoutMS, open.Protocol = timeout.Milliseconds(), c.e.EP.Protocol
	}
	r, err := w.Request(ctx, open)
	if err != nil {
		if !errors.Is(err, tsworker.ErrGone) {
			_, _ = w.Request(context.Background(), tsworker.Msg{Op: "close", C: c.Index()}) // it may still open
		}
		return nil, err
	}
	if r.Ev != "opened" {
		return nil, fmt.Errorf("%s: %s", c.e.Kind, r.Error)
	}
	return &tsConn{w: w, c: c.Index(), id: r.Session, proto: r.Protocol, done: done, timeout: timeout}, nil
}

func (t *tsConn) sessionID() string      { return t.id }
func (t *tsConn) protocol() string       { return t.proto }
func (t *tsConn) ended() <-chan struct{} { return t.done }

func (t *tsConn) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = t.w.Request(ctx, tsworker.Msg{Op: "close", C: t.c})
}

func (t *tsConn) list(ctx context.Context) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout+30*time.Second)
	defer cancel()
	r, err := t.w.Request(ctx, tsworker.Msg{Op: "list", C: t.c})
	if err != nil {
		return nil, err
	}
	if r.Ev != "listed" {
		return nil, fmt.Errorf("tools/list: %s: %s", r.Class, r.Message)
	}
	return r.Tools, nil
}

// call makes the call in the worker. The library's own timeout bounds it; ours, half a minute
// later, only guards against a worker that stopped answering.
func (t *tsConn) call(ctx context.Context, tool string, args any, progress string) libOutcome {
	ctx, cancel := context.WithTimeout(ctx, t.timeout+30*time.Second)
	defer cancel()
	o := libOutcome{sent: time.Now(), timeout: t.timeout}
	r, err := t.w.Request(ctx, tsworker.Msg{Op: "call", C: t.c, Tool: tool, Args: args, Progress: progress})
	o.took = time.Since(o.sent)
	switch {
	case err != nil:
		o.err, o.class = err, "mcpchaos: "+err.Error()
		o.timedOut = errors.Is(err, context.DeadlineExceeded)
	case r.OK:
		o.isError = r.IsError
	default:
		o.err = fmt.Errorf("%s: %s", r.Class, r.Message)
		o.class, o.gone, o.misclassified, o.timedOut, o.answered = r.Class, r.Gone, r.Misclassified, r.TimedOut, r.Answered
	}
	return o
}
