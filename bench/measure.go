package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/redact"
)

// Result is one measurement. Growths are from the measuring process's baseline (set up, no
// session) to the moment every session is held; per-session figures divide by Sessions.
type Result struct {
	Client   string `json:"client"`
	Sessions int    `json:"sessions"`
	Proxied  bool   `json:"proxied"`
	PID      int    `json:"pid"` // of the measuring process, for an outside reading
	// WorkerProcesses counts the node workers that held a TypeScript kind's sessions: the
	// memory, descriptor and CPU figures are the measuring process's and theirs, summed.
	WorkerProcesses  int     `json:"worker_processes,omitempty"`
	EstablishSeconds float64 `json:"establish_seconds"`
	EstablishPerSec  float64 `json:"establish_per_second"`
	// Read by the parent from /proc/PID/smaps_rollup, /proc/PID/fd and /proc/PID/stat.
	RSSBytes     int64   `json:"rss_growth_bytes"`
	PSSBytes     int64   `json:"pss_growth_bytes"`
	HeldRSSBytes int64   `json:"rss_held_bytes"` // the absolute figures at the hold
	HeldPSSBytes int64   `json:"pss_held_bytes"`
	FDs          int     `json:"fds_growth"`
	CPUPerCallUS float64 `json:"cpu_per_call_us"`
	// CPU time spent establishing the sessions, per session, by the measuring process, the
	// proxies and the server (the server's filled in by Compare): a cost that other jobs on
	// the machine do not move, where the rate per second they do.
	EstablishCPUUS       float64 `json:"establish_cpu_us"`
	ProxyEstablishCPUUS  float64 `json:"proxy_establish_cpu_us,omitempty"`
	TargetEstablishCPUUS float64 `json:"target_establish_cpu_us,omitempty"`
	// Reported by the measuring process itself: counters it keeps anyway.
	HeapBytes  int64 `json:"heap_growth_bytes"`  // spans holding objects: the live objects and the free space between them
	LiveBytes  int64 `json:"live_growth_bytes"`  // the live objects in them
	StackBytes int64 `json:"stack_growth_bytes"` // goroutine stacks
	Goroutines int   `json:"goroutines_growth"`
	// The proxy process's growth over the same moments (zero without the proxy).
	ProxyRSSBytes     int64   `json:"proxy_rss_growth_bytes,omitempty"`
	ProxyGoroutines   int     `json:"proxy_goroutines_growth,omitempty"`
	ProxyFDs          int     `json:"proxy_fds_growth,omitempty"`
	ProxyCPUPerCallUS float64 `json:"proxy_cpu_per_call_us,omitempty"`
	ProxyProcesses    int     `json:"proxy_processes,omitempty"` // the proxy figures are their sum

	// TCP connections the client opened to establish the sessions, and during the calls.
	EstablishDials int64 `json:"establish_dials"`
	CallDials      int64 `json:"call_dials"`

	Calls      int    `json:"calls"`
	CallErrors int    `json:"call_errors"`
	ProbeP50US int64  `json:"probe_p50_us"`
	BareP50US  int64  `json:"bare_round_trip_p50_us"`
	Protocol   string `json:"protocol"`
}

// holding fills in the measuring process's growth from the ready phase to the held sessions:
// read from /proc (base, at) and reported by the process itself (ready, holding).
func (r *Result) holding(base, at Reading, ready, holding *report) {
	r.RSSBytes, r.PSSBytes, r.FDs = at.RSS-base.RSS, at.PSS-base.PSS, at.FDs-base.FDs
	r.HeldRSSBytes, r.HeldPSSBytes = at.RSS, at.PSS
	r.Goroutines = holding.Goroutines - ready.Goroutines
	r.HeapBytes, r.LiveBytes = holding.HeapBytes-ready.HeapBytes, holding.LiveBytes-ready.LiveBytes
	r.StackBytes = holding.StackBytes - ready.StackBytes
	r.EstablishSeconds, r.Protocol, r.EstablishDials = holding.EstablishSeconds, holding.Protocol, holding.Dials
	r.EstablishPerSec = float64(r.Sessions) / max(holding.EstablishSeconds, 1e-9)
	r.EstablishCPUUS = perSessionUS(at.CPU-base.CPU, r.Sessions)
}

// perSessionUS is d shared over n sessions, in microseconds.
func perSessionUS(d time.Duration, n int) float64 {
	return float64(d.Microseconds()) / float64(max(n, 1))
}

// Per-session views of a result.
func (r Result) RSSPerSession() float64 { return float64(r.RSSBytes) / float64(r.Sessions) }
func (r Result) PSSPerSession() float64 { return float64(r.PSSBytes) / float64(r.Sessions) }
func (r Result) GoroutinesPerSession() float64 {
	return float64(r.Goroutines) / float64(r.Sessions)
}
func (r Result) FDsPerSession() float64 { return float64(r.FDs) / float64(r.Sessions) }

// Launch builds the command for one of the benchmark's own child processes; the child must
// call Child with spec, its stdin and its stdout. Stderr is the launcher's to set.
type Launch func(ctx context.Context, spec string) *exec.Cmd

// Held is called while the sessions are held and the measuring process stands still, with the
// readings taken so far (memory, descriptors, goroutines). An error ends the measurement.
type Held func(pid int, r *Result) error

// childSpec tells a child process what it is.
type childSpec struct {
	Role     string  `json:"role"` // "hold" (the measuring process) or "proxy"
	Options  Options `json:"options"`
	Upstream string  `json:"upstream,omitempty"`
}

// Child runs the child process that spec (from a Launch) describes.
func Child(ctx context.Context, spec string, in io.Reader, out io.Writer) error {
	var s childSpec
	dec := json.NewDecoder(strings.NewReader(spec))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return fmt.Errorf("bench child spec: %w", err)
	}
	switch s.Role {
	case "hold":
		return Hold(ctx, s.Options, in, out)
	case "proxy":
		return ServeProxy(ctx, s.Upstream, in, out)
	}
	return fmt.Errorf("bench child spec: unknown role %q", s.Role)
}

// Measure runs one measurement: a measuring process (and, unless o.NoProxy, a proxy process
// in front of o.URL) started with launch, read from /proc at each quiet moment. held, if not
// nil, is called while the sessions are held.
func Measure(ctx context.Context, o Options, launch Launch, held Held) (_ *Result, err error) {
	if o.Sessions < 1 {
		return nil, errors.New("bench: at least one session")
	}
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	r := &Result{Client: o.Client, Sessions: o.Sessions, Proxied: !o.NoProxy}
	hold := o
	var px proxies
	if !o.NoProxy {
		defer func() { err = errors.Join(err, px.end(err)) }()
		per := o.SessionsPerProxy
		if per <= 0 {
			per = sessionsPerProxy
		}
		if hold.URL, hold.Via, err = px.start(ctx, launch, o.URL, (o.Sessions+per-1)/per); err != nil {
			return nil, err
		}
		r.ProxyProcesses = len(px)
	}
	m, err := start(ctx, launch, childSpec{Role: "hold", Options: hold})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, m.end(err)) }()
	r.PID = m.pid()
	var ready, holding, called, done report
	base, err := m.quietRead(&ready, phaseReady)
	r.WorkerProcesses = len(ready.Workers)
	if err == nil {
		err = m.resume()
	}
	if err != nil {
		return nil, err
	}
	at, err := m.quietRead(&holding, phaseHolding)
	if err != nil {
		return nil, err
	}
	r.holding(base, at, &ready, &holding)
	if len(px) > 0 {
		if err := px.held(r); err != nil {
			return nil, err
		}
	}
	if held != nil {
		if err := held(r.PID, r); err != nil {
			return nil, err
		}
	}
	if err := m.resume(); err != nil {
		return nil, err
	}

	after, err := m.quietRead(&called, phaseCalled)
	if err == nil {
		err = m.resume()
	}
	if err != nil {
		return nil, err
	}
	r.Calls, r.CallErrors, r.CallDials = called.Calls, called.CallErrors, called.Dials-holding.Dials
	if r.Calls > 0 {
		r.CPUPerCallUS = float64((after.CPU - at.CPU).Microseconds()) / float64(r.Calls)
	}
	if len(px) > 0 {
		if err := px.called(r); err != nil {
			return nil, err
		}
	}
	if _, err := m.quietRead(&done, phaseDone); err != nil { // ended by closing its stdin
		return nil, err
	}
	r.ProbeP50US, r.BareP50US = done.ProbeP50US, done.BareP50US
	return r, nil
}

// proxyProcess is the proxy child and its readings.
type proxyProcess struct {
	*child
	first    proxyReport
	base, at Reading
}

// sessionsPerProxy is how many sessions one proxy process carries (Options.SessionsPerProxy
// zero). A proxied session costs the proxy process faults.ProxyDescriptorsPerConn (2)
// descriptors, and a process may hold 20,000: 8,000 sessions leave room for the pool's
// connections and those still closing. (Before the relay fed Toxiproxy's chains in process it
// was 10.6 and 1,500 a process.)
const sessionsPerProxy = 8000

// proxies are the proxy processes, all in front of the same target; the measuring process
// spreads its connections over them (Options.Via) and their figures are summed.
type proxies []*proxyProcess

// start starts n proxy processes in front of target, and returns the URL through the first
// and the listen addresses of all.
func (ps *proxies) start(ctx context.Context, launch Launch, target string, n int) (string, []string, error) {
	u, err := redact.ParseURL(target)
	if err != nil {
		return "", nil, fmt.Errorf("bench: target URL: %w", err)
	}
	var via []string
	for range n {
		c, err := start(ctx, launch, childSpec{Role: "proxy", Upstream: u.Host})
		if err != nil {
			return "", nil, err
		}
		px := &proxyProcess{child: c}
		*ps = append(*ps, px)
		if err = c.next(&px.first); err == nil {
			px.base, err = ReadProc(c.pid())
		}
		if err != nil {
			return "", nil, fmt.Errorf("bench: proxy process: %w", err)
		}
		via = append(via, px.first.Listen)
	}
	return (&url.URL{Scheme: "http", Host: via[0], Path: u.Path}).String(), via, nil
}

// held reads the proxies while the sessions are held; each must have carried connections.
func (ps proxies) held(r *Result) error {
	for i, px := range ps {
		var now proxyReport
		if err := px.resume(); err != nil {
			return err
		}
		if err := px.next(&now); err != nil {
			return fmt.Errorf("bench: proxy process: %w", err)
		}
		at, err := ReadProc(px.pid()) // it has settled and waits again
		if err != nil {
			return err
		}
		px.at = at
		if at.FDs <= px.base.FDs {
			return fmt.Errorf("bench: proxy process %d of %d carried no connection: the dials were not spread over them", i+1, len(ps))
		}
		r.ProxyRSSBytes += at.RSS - px.base.RSS
		r.ProxyEstablishCPUUS += perSessionUS(at.CPU-px.base.CPU, r.Sessions)
		r.ProxyFDs += at.FDs - px.base.FDs
		r.ProxyGoroutines += now.Goroutines - px.first.Goroutines
	}
	return nil
}

// called reads the proxies' CPU time after the calls.
func (ps proxies) called(r *Result) error {
	var cpu time.Duration
	for _, px := range ps {
		after, err := ReadProc(px.pid())
		if err != nil {
			return err
		}
		cpu += after.CPU - px.at.CPU
	}
	if r.Calls > 0 {
		r.ProxyCPUPerCallUS = float64(cpu.Microseconds()) / float64(r.Calls)
	}
	return nil
}

// end ends every proxy process.
func (ps proxies) end(failed error) error {
	var errs []error
	for _, px := range ps {
		errs = append(errs, px.child.end(failed))
	}
	return errors.Join(errs...)
}

// child is one of the benchmark's child processes, spoken to over its stdin and stdout.
type child struct {
	workers []int // processes that hold sessions for it (node workers), read with it
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *json.Decoder
	closed  bool // its stdout ended: it exited or is exiting
}

func start(ctx context.Context, launch Launch, spec childSpec) (*child, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	c := &child{cmd: launch(ctx, string(data))}
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: starting the %s process: %w", spec.Role, err)
	}
	c.out = json.NewDecoder(stdout)
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// next reads the child's next line into v.
func (c *child) next(v any) error {
	err := c.out.Decode(v)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		c.closed = true
	}
	return err
}

// quietRead waits for the measuring process's report of phase want and reads it from /proc
// while it waits; resume lets it go on.
func (c *child) quietRead(r *report, want string) (Reading, error) {
	if err := c.next(r); err != nil {
		return Reading{}, fmt.Errorf("bench: measuring process, waiting for phase %s: %w", want, err)
	}
	if r.Phase != want {
		return Reading{}, fmt.Errorf("bench: measuring process said phase %q, want %q", r.Phase, want)
	}
	if len(r.Workers) > 0 {
		c.workers = r.Workers
	}
	sum, err := ReadProc(c.pid())
	for _, pid := range c.workers {
		w, werr := ReadProc(pid)
		if werr != nil {
			return Reading{}, errors.Join(err, werr)
		}
		sum.RSS, sum.PSS, sum.FDs, sum.CPU = sum.RSS+w.RSS, sum.PSS+w.PSS, sum.FDs+w.FDs, sum.CPU+w.CPU
	}
	return sum, err
}

// resume lets the child go on past a quiet moment.
func (c *child) resume() error {
	_, err := io.WriteString(c.in, "\n")
	return err
}

// end closes the child's stdin, which ends it, and waits for it. If the measurement failed
// while the child still runs, the child is killed (our own child, by its PID), not waited for.
func (c *child) end(failed error) error {
	if failed != nil && !c.closed {
		_ = c.cmd.Process.Kill()
	}
	_ = c.in.Close()
	if err := c.cmd.Wait(); err != nil && (failed == nil || c.closed) {
		return fmt.Errorf("bench: child process %d: %w", c.pid(), err)
	}
	return nil
}
