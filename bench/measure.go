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

	// TCP connections the client opened to establish the sessions, and during the calls.
	EstablishDials int64 `json:"establish_dials"`
	CallDials      int64 `json:"call_dials"`

	Calls      int    `json:"calls"`
	CallErrors int    `json:"call_errors"`
	ProbeP50US int64  `json:"probe_p50_us"`
	BareP50US  int64  `json:"bare_round_trip_p50_us"`
	Protocol   string `json:"protocol"`
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
	var px *proxyProcess
	if !o.NoProxy {
		if px, hold.URL, err = startProxy(ctx, launch, o.URL); err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, px.end(err)) }()
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
	r.RSSBytes, r.PSSBytes, r.FDs = at.RSS-base.RSS, at.PSS-base.PSS, at.FDs-base.FDs
	r.HeldRSSBytes, r.HeldPSSBytes = at.RSS, at.PSS
	r.Goroutines = holding.Goroutines - ready.Goroutines
	r.HeapBytes, r.LiveBytes = holding.HeapBytes-ready.HeapBytes, holding.LiveBytes-ready.LiveBytes
	r.StackBytes = holding.StackBytes - ready.StackBytes
	r.EstablishSeconds, r.Protocol, r.EstablishDials = holding.EstablishSeconds, holding.Protocol, holding.Dials
	r.EstablishPerSec = float64(o.Sessions) / max(holding.EstablishSeconds, 1e-9)
	if px != nil {
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
	if px != nil {
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

// startProxy starts the proxy process in front of target and returns the URL through it.
func startProxy(ctx context.Context, launch Launch, target string) (*proxyProcess, string, error) {
	u, err := redact.ParseURL(target)
	if err != nil {
		return nil, "", fmt.Errorf("bench: target URL: %w", err)
	}
	c, err := start(ctx, launch, childSpec{Role: "proxy", Upstream: u.Host})
	if err != nil {
		return nil, "", err
	}
	px := &proxyProcess{child: c}
	if err = c.next(&px.first); err == nil {
		px.base, err = ReadProc(c.pid())
	}
	if err != nil {
		return nil, "", errors.Join(fmt.Errorf("bench: proxy process: %w", err), c.end(err))
	}
	return px, (&url.URL{Scheme: "http", Host: px.first.Listen, Path: u.Path}).String(), nil
}

// held reads the proxy while the sessions are held.
func (px *proxyProcess) held(r *Result) (err error) {
	var now proxyReport
	if err := px.resume(); err != nil {
		return err
	}
	if err := px.next(&now); err != nil {
		return fmt.Errorf("bench: proxy process: %w", err)
	}
	if px.at, err = ReadProc(px.pid()); err != nil { // it has settled and waits again
		return err
	}
	r.ProxyRSSBytes, r.ProxyFDs = px.at.RSS-px.base.RSS, px.at.FDs-px.base.FDs
	r.ProxyGoroutines = now.Goroutines - px.first.Goroutines
	return nil
}

// called reads the proxy's CPU time after the calls.
func (px *proxyProcess) called(r *Result) error {
	after, err := ReadProc(px.pid())
	if err == nil && r.Calls > 0 {
		r.ProxyCPUPerCallUS = float64((after.CPU - px.at.CPU).Microseconds()) / float64(r.Calls)
	}
	return err
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
