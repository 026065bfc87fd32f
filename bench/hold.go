package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/outfile"
	"github.com/mcpchaos/mcpchaos/redact"
)

// Client kinds a measurement can hold.
const (
	Lean  = "mcpchaos" // this tool's own session client, held by its fleet
	GoSDK = "gosdk"    // the official Go SDK client (StreamableClientTransport)
)

// Options say what one measurement does.
type Options struct {
	Client   string `json:"client"` // one of Kinds()
	URL      string `json:"url"`    // the target's MCP endpoint (loopback)
	Sessions int    `json:"sessions"`
	Rounds   int    `json:"rounds"`   // rounds of one tools/call per session
	Probes   int    `json:"probes"`   // probes (and as many bare round trips) timed on one session
	NoProxy  bool   `json:"no_proxy"` // talk to the target directly instead of through Toxiproxy
	Workers  int    `json:"workers"`  // concurrent establishments and calls
	// Via, when set, are the host:port the connections are dialed to instead of the URL's host,
	// in turn, one per dial: proxy processes in front of the same target (one cannot hold
	// 3,000 proxied sessions' descriptors). Set by Measure.
	Via []string `json:"via,omitempty"`
	// SessionsPerProxy is how many sessions one proxy process carries; 0 means 1,500.
	SessionsPerProxy int `json:"sessions_per_proxy,omitempty"`
	// HeapProfile, if set, is where the measuring process writes a heap profile of the held
	// sessions, after the parent has read it (so the profile is not in the figures; its
	// finer sampling is: a profiled run's memory figures are not for the table).
	HeapProfile string `json:"heap_profile,omitempty"`
}

func (o Options) check() error {
	u, err := redact.ParseURL(o.URL)
	if err != nil {
		return fmt.Errorf("target URL: %w", err)
	}
	if hostIP(u.Host) == "" {
		return fmt.Errorf("bench talks to loopback targets only, not %q", u.Host)
	}
	for _, v := range o.Via {
		if hostIP(v) == "" {
			return fmt.Errorf("bench talks to loopback proxies only, not %q", v)
		}
	}
	if !knownKind(o.Client) {
		return fmt.Errorf("unknown client kind %q (want one of %s)", o.Client, strings.Join(Kinds(), ", "))
	}
	return nil
}

// Phases of the measuring process. At each it writes one report line and waits for a line
// from the parent, so the parent reads /proc while the process stands still.
const (
	phaseReady   = "ready"   // set up, no session yet: the baseline
	phaseHolding = "holding" // every session held, garbage collected
	phaseCalled  = "called"  // the rounds of calls are done
	phaseDone    = "done"    // probes timed; sessions held until the parent closes the pipe
)

// report is what the measuring process says at a phase. Only counters it already keeps:
// nothing is allocated to take them.
type report struct {
	Phase            string  `json:"phase"`
	Goroutines       int     `json:"goroutines,omitempty"`
	HeapBytes        int64   `json:"heap_bytes,omitempty"`  // spans holding objects: live objects and the gaps between them
	LiveBytes        int64   `json:"live_bytes,omitempty"`  // live objects, after a GC
	StackBytes       int64   `json:"stack_bytes,omitempty"` // goroutine stacks
	EstablishSeconds float64 `json:"establish_seconds,omitempty"`
	Protocol         string  `json:"protocol,omitempty"`
	Dials            int64   `json:"dials,omitempty"` // TCP connections opened so far
	Calls            int     `json:"calls,omitempty"`
	CallErrors       int     `json:"call_errors,omitempty"`
	ProbeP50US       int64   `json:"probe_p50_us,omitempty"`
	BareP50US        int64   `json:"bare_round_trip_p50_us,omitempty"`
	Workers          []int   `json:"worker_pids,omitempty"` // node workers of a TypeScript kind (ready phase)
}

// Hold is the measuring process: it holds o.Sessions sessions of o.Client against o.URL,
// stopping at each phase to write a report line to out and read a line from parent. It ends
// its sessions when parent closes (EOF) after the last phase; EOF earlier is an error.
func Hold(ctx context.Context, o Options, parent io.Reader, out io.Writer) error {
	if err := o.check(); err != nil {
		return err
	}
	if o.Workers <= 0 {
		o.Workers = 64
	}
	if o.HeapProfile != "" {
		runtime.MemProfileRate = 4096 // before the first allocation of a session
	}
	in := bufio.NewReader(parent)
	enc := json.NewEncoder(out)
	pause := func(r report) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		if _, err := in.ReadString('\n'); err != nil {
			return fmt.Errorf("after phase %s: the parent went away: %w", r.Phase, err)
		}
		return nil
	}
	// What a client kind needs whatever the number of sessions is set up before the baseline.
	var n counts
	var workers []int // node worker processes holding the sessions, beside this one
	var establish func(context.Context) (holder, error)
	switch o.Client {
	case Lean:
		establish = prepareLean(o.URL, o, &n)
	case GoSDK:
		establish = prepareSDK(o.URL, o, &n)
	default:
		var err error
		if establish, workers, err = prepareLib(ctx, o.URL, o, &n); err != nil {
			return err
		}
	}
	if err := pause(quiet(report{Phase: phaseReady, Workers: workers})); err != nil {
		return err
	}

	t0 := time.Now()
	h, err := establish(ctx)
	if err != nil {
		return err
	}
	defer h.close()
	established := time.Since(t0).Seconds()
	if o.Client == Lean || o.Client == GoSDK { // kinds whose streams pass through our transport
		if open := n.awaitStreams(ctx, int64(o.Sessions), 2*time.Minute); open < int64(o.Sessions) {
			return fmt.Errorf("only %d of %d sessions opened their GET stream", open, o.Sessions)
		}
	}
	settle(ctx)
	if err := pause(quiet(report{Phase: phaseHolding, EstablishSeconds: established, Protocol: h.protocol(), Dials: n.dials.Load()})); err != nil {
		return err
	}

	if o.HeapProfile != "" {
		if err := writeHeapProfile(o.HeapProfile); err != nil {
			return err
		}
	}

	var calls, fails atomic.Int64
	for range o.Rounds {
		parallel(o.Sessions, o.Workers, func(i int) {
			if err := h.call(ctx, i); err != nil {
				fails.Add(1)
			}
			calls.Add(1)
		})
	}
	if err := pause(report{Phase: phaseCalled, Calls: int(calls.Load()), CallErrors: int(fails.Load()), Dials: n.dials.Load()}); err != nil {
		return err
	}

	probe, bare, err := probeVsBare(ctx, h, o.URL, o.Probes)
	if err != nil {
		return err
	}
	if err := enc.Encode(report{Phase: phaseDone, ProbeP50US: probe, BareP50US: bare}); err != nil {
		return err
	}
	// Hold until the parent has read what it wants, then end the sessions (deferred).
	if _, err := in.ReadString('\n'); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// quiet settles the process before a reading, the same for every client kind: the garbage of
// establishing is collected and freed memory goes back to the OS, so RSS shows what the held
// sessions keep. Several GCs, because each halves at most once the stack of a goroutine that
// uses under a quarter of it; a held session lives through many. It fills in the counters the
// process itself reports, read from runtime/metrics after the last collection (no
// stop-the-world, nothing allocated that the reading would count).
func quiet(r report) report {
	for range settleGCs {
		runtime.GC()
	}
	debug.FreeOSMemory() // one more GC, then the freed pages back to the OS
	ms := memSamples()
	metrics.Read(ms)
	v := func(i int) int64 { return int64(ms[i].Value.Uint64()) }
	r.Goroutines = runtime.NumGoroutine()
	r.LiveBytes = v(0)
	r.HeapBytes = v(0) + v(1)
	r.StackBytes = v(2) + v(3)
	return r
}

// memSamples names what quiet reads: the heap's live objects, the free space in the heap's
// spans that hold them, and goroutine stacks (from the heap and straight from the OS).
func memSamples() []metrics.Sample {
	return []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
		{Name: "/memory/classes/os-stacks:bytes"},
	}
}

// settleGCs is enough for a 32 KiB stack that needs 2 KiB to shrink to its floor.
const settleGCs = 4

// settle waits until the held sessions stop starting goroutines: both clients open their GET
// streams asynchronously after initialize, each with a reader goroutine. The goroutine count
// unchanged over several polls is the sign; the wait is bounded, and the figures are read
// after it whatever it finds.
func settle(ctx context.Context) {
	const (
		every  = 50 * time.Millisecond
		stable = 6 // polls without change
		bound  = 15 * time.Second
	)
	last, same := runtime.NumGoroutine(), 0
	t := time.NewTicker(every)
	defer t.Stop()
	deadline := time.Now().Add(bound)
	for same < stable && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n := runtime.NumGoroutine(); n == last {
			same++
		} else {
			last, same = n, 0
		}
	}
}

// writeHeapProfile writes the live heap, as of a fresh GC, to path.
func writeHeapProfile(path string) error {
	runtime.GC()
	if err := outfile.WriteWith(path, os.Stdout, pprof.WriteHeapProfile); err != nil {
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	return nil
}
