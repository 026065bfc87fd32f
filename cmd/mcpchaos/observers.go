package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/metrics/prom"
	"github.com/mcpchaos/mcpchaos/results"
)

// progressObserver shows the run's progress (progress.go) from its start to its end.
type progressObserver struct {
	mode string
	out  io.Writer

	mu    sync.Mutex
	timer *time.Timer
	stop  func()
	done  bool
}

// Start shows progress from the run's start: with a start time ahead, nothing is shown while
// the run waits for it.
func (p *progressObserver) Start(v *engine.View) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = time.AfterFunc(time.Until(v.Start), func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.done {
			p.stop = startProgress(p.mode, p.out, v.Start, v.Planned, viewStatus(v), func(from, now time.Time) (string, []string) {
				return v.Phase(now), v.FaultsDuring(from, now)
			}, v.Generator)
		}
	})
	return nil
}

func (p *progressObserver) Stop(*engine.View, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	p.timer.Stop()
	if p.stop != nil {
		p.stop()
	}
}

// viewStatus reads every group's progress row from the run's view. It is called from a
// ticker, never from the workers: they only bump atomics, which it reads.
func viewStatus(v *engine.View) statusSource {
	return func() []groupStatus {
		gs := v.Groups()
		out := make([]groupStatus, len(gs))
		for i, g := range gs {
			c, rec := g.Census, g.Recorder
			s := groupStatus{
				Name: g.Name, Live: c.Live, Reconnecting: c.Reconnecting + c.Reinit,
				BelievedLiveButDead: c.BelievedLiveButDead,
				DeadDetected:        rec.Get(metrics.SessionsDeadDetected),
				Misattributed:       rec.Get(metrics.MisattributedErrors),
				Withheld:            g.Withheld,
			}
			for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
				if n := rec.Errors(k); n > 0 {
					if s.Errors == nil {
						s.Errors = map[string]int64{}
					}
					s.Errors[k.String()] = n
				}
			}
			out[i] = s
		}
		return out
	}
}

// metricsObserver serves the run's live numbers at --metrics-addr (prom.Serve) while the
// run goes on; after it, the final numbers until a scrape has read them or --metrics-linger
// has passed (linger, called once the export is written).
type metricsObserver struct {
	addr     string
	stderr   io.Writer
	lm       *prom.Endpoint
	finished atomic.Bool // read by scrapes: mcpchaos_run_finished
}

func (m *metricsObserver) Start(v *engine.View) error {
	labels := map[string]string{"workload": v.Workload, "run_id": v.RunID}
	if v.Shard != nil {
		labels["shard"] = strconv.Itoa(v.Shard.Index)
	}
	lm, err := prom.Serve(m.addr, labels,
		prom.NewCollector(v.Recorders(), v.Believed),
		prom.NewRunCollector(v.Phases(), v.FaultNames(), v.Labels, func() prom.RunState {
			return prom.RunState{Phase: v.Phase(time.Now()), Faults: v.Faults(), Finished: m.finished.Load()}
		}),
		prom.NewGeneratorCollector(func() prom.GeneratorState { return generatorState(v) }))
	if err != nil {
		return fmt.Errorf("--metrics-addr %s: %w", m.addr, err)
	}
	m.lm = lm
	fmt.Fprintf(m.stderr, "mcpchaos: live metrics at http://%s/metrics (run_id %s)\n", lm.Addr(), v.RunID)
	return nil
}

// Stop marks the numbers final; the endpoint stays up for linger.
func (m *metricsObserver) Stop(*engine.View, time.Time) {
	m.finished.Store(true)
	if m.lm != nil {
		m.lm.Finish()
	}
}

// linger serves the final numbers for a while (see prom.Endpoint.Linger), then closes.
func (m *metricsObserver) linger(ctx context.Context, d time.Duration, stderr io.Writer) {
	if m == nil || m.lm == nil {
		return
	}
	if d > 0 {
		fmt.Fprintf(stderr, "mcpchaos: serving the final metrics at http://%s/metrics until one scrape reads them (at most %s)\n", m.lm.Addr(), d)
	}
	if err := m.lm.Linger(ctx, d); err != nil {
		fmt.Fprintln(stderr, "mcpchaos: live metrics:", err)
	}
}

// generatorState is the generator's last window for the live endpoint (zero before the first
// window closed, or in a view without a generator).
func generatorState(v *engine.View) prom.GeneratorState {
	if v.Generator == nil {
		return prom.GeneratorState{}
	}
	l := v.Generator()
	return prom.GeneratorState{
		TimerLagP99S: l.TimerLagP99 / 1e6, SchedP99S: l.SchedP99 / 1e6, CPUShare: l.CPUShare,
		CPUWaitShare: l.CPUWaitShare, GCPauseS: l.GCPause / 1e6, Starved: l.Starved, StarvedTotalS: l.StarvedS,
	}
}

// writeGeneratorWarning says when the load generator was starved past its bound: a warning,
// not a problem, because the run's counts of hazards still hold; its timing figures from the
// starved windows are the runner's as much as the server's, and compare calls them
// inconclusive (docs/gate.md).
func writeGeneratorWarning(w io.Writer, exp *results.Export) {
	g := exp.Generator
	if g == nil || !g.Starved {
		return
	}
	fmt.Fprintf(w, "warning: the load generator was %s; its latencies and amounts of work from then are the runner's as much as the server's (bound: %s)\n", g.Why(), g.Bound)
}

// checkMetricsAddr checks --metrics-addr: HOST:PORT, on loopback unless public.
func checkMetricsAddr(addr string, public bool) error {
	return checkListenAddr("--metrics-addr", addr, "127.0.0.1:9464", public, "pass --metrics-public to serve the metrics there")
}

// checkListenAddr checks a listen address given by flag: HOST:PORT (example shows one), on
// loopback unless public; notPublic says how to listen elsewhere.
func checkListenAddr(flag, addr, example string, public bool, notPublic string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("%s %q: %v (want HOST:PORT, e.g. %s)", flag, addr, err, example)
	}
	if ip := net.ParseIP(host); !public && (ip == nil || !ip.IsLoopback()) && host != "localhost" {
		return usagef("%s %q is not a loopback address; %s", flag, addr, notPublic)
	}
	return nil
}

// writeIncomplete heads the summary of a run that did not measure the server, with why: its
// load generator starved for most of its time, or most of its transport errors its own
// (docs/metrics.md, "Whose errors"). These are the summary's first lines, not a footnote.
func writeIncomplete(w io.Writer, exp *results.Export) {
	if g := exp.Generator; g.MostlyStarved() {
		shards := ""
		if g.Shards > 0 {
			shards = fmt.Sprintf(" (%d of %d shards starved)", g.StarvedShards, g.Shards)
		}
		late := ""
		if c := exp.Overall.Causes; c != nil {
			late = fmt.Sprintf("; %d calls began over 1s late, %d turns were skipped and %d timeouts came while it was starved", c.CallsLate, c.SkippedWhileStarved, c.OwnWhileStarved)
		}
		fmt.Fprintf(w, "STARVED: the load generator was %s%s%s: its timing figures are the machine's running it as much as the server's\n", g.Why(), shards, late)
		if why := exp.LateWhy(); why != "" {
			fmt.Fprintf(w, "LATE: %s\n", why)
		}
	}
	if why := exp.OwnErrorsWhy(); why != "" {
		fmt.Fprintf(w, "INCOMPLETE: %s\n", why)
	}
}

// incompleteErr is the error of a run that did not measure the server (exit 1): most of its
// transport errors its own or, for a --procs run (procs: true), its shards starved for most of
// the run by the plan it ran on this machine so that its calls could not keep their schedule.
// A starved run whose calls kept it stays complete: its headline says STARVED and compare
// calls its timing inconclusive.
func incompleteErr(exp *results.Export, procs bool) error {
	var why []string
	if g := exp.Generator; procs && g.MostlyStarved() {
		if late := exp.LateWhy(); late != "" {
			why = append(why, "the load generator was "+g.Why()+" and "+late+"; run fewer --procs or fewer clients on this machine, or shard across machines")
		}
	}
	if w := exp.OwnErrorsWhy(); w != "" {
		why = append(why, w)
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("incomplete: %s", strings.Join(why, "; "))
}
