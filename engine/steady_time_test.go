package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpchaos/mcpchaos/steady"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// The steady-state probes' timing on synctest's fake clock: the checks are fakes that take
// the time they are told to, so every time below is exact, whatever the machine's load.

// scriptedCheck is a steady.Check that answers from a script (pass or fail, in order; the last
// answer repeats), taking took each time.
type scriptedCheck struct {
	pass []bool
	took time.Duration
	n    int
}

func (c *scriptedCheck) Kind() string { return "http" }

func (c *scriptedCheck) Observe(ctx context.Context) steady.Observation {
	pass := c.pass[min(c.n, len(c.pass)-1)]
	c.n++
	if c.took > 0 {
		time.Sleep(c.took)
	}
	if !pass {
		return steady.Observation{Detail: "status 503", Fail: "status 503, want 200"}
	}
	return steady.Observation{Detail: "status 200"}
}

func fakeProbe(spec workloads.SteadyProbe, c *scriptedCheck) (*runner, *steadyProbe) {
	sp := &steadyProbe{spec: spec, probe: steady.Probe{Name: spec.Name, Check: c}}
	return &runner{steady: &steadyState{probes: []*steadyProbe{sp}}}, sp
}

// runTimes is when each recorded run of sp began, from start.
func runTimes(sp *steadyProbe, start time.Time) []time.Duration {
	var at []time.Duration
	for _, pr := range sp.runs {
		at = append(at, pr.at.Sub(start))
	}
	return at
}

// probeEvery runs a probe every `every` within its window, first at from plus min(every, half
// the window); a window shorter than every still gets one run, in its middle; a probe slower
// than every skips the turns it took and comes back on the grid; a run in flight when the run
// ends finishes (only an interrupt cuts it).
func TestProbeEveryOnAFakeClock(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name        string
		from, until time.Duration
		took        time.Duration
		runEnds     time.Duration // 0: at until
		want        []time.Duration
	}{
		{name: "every second of five", until: 5 * s, want: []time.Duration{s, 2 * s, 3 * s, 4 * s}},
		{name: "a fault window shorter than every", from: 2 * s, until: 2600 * time.Millisecond, want: []time.Duration{2300 * time.Millisecond}},
		{name: "a probe slower than every", until: 8 * s, took: 2500 * time.Millisecond, want: []time.Duration{s, 4 * s, 7 * s}},
		{name: "the run ends during a run", until: 5 * s, took: 1 * s, runEnds: 2500 * time.Millisecond, want: []time.Duration{s, 2 * s}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r, sp := fakeProbe(workloads.SteadyProbe{Name: "p", Every: s}, &scriptedCheck{pass: []bool{true}, took: tc.took})
				start := time.Now()
				runCtx, cancel := context.WithDeadline(context.Background(), start.Add(cmp(tc.runEnds, tc.until)))
				defer cancel()
				r.probeEvery(runCtx, context.Background(), sp, workloads.SteadyContinuously, start, tc.from, tc.until)
				if got := runTimes(sp, start); !slices.Equal(got, tc.want) {
					t.Errorf("runs at %v, want %v", got, tc.want)
				}
				for _, pr := range sp.runs {
					if !pr.res.Pass || pr.res.Took != tc.took {
						t.Errorf("a run %+v: want it passed, in %s (the run's end does not cut it)", pr.res, tc.took)
					}
				}
			})
		})
	}
}

func cmp(d, otherwise time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return otherwise
}

// A probe with retries waits its retry interval between attempts and says which attempt
// passed; an interrupt during the wait records the run as skipped, not as the system failing.
func TestProbeRetriesOnAFakeClock(t *testing.T) {
	spec := workloads.SteadyProbe{Name: "settles", Retries: 2, RetryInterval: 10 * time.Second}
	synctest.Test(t, func(t *testing.T) {
		r, sp := fakeProbe(spec, &scriptedCheck{pass: []bool{false, false, true}})
		start := time.Now()
		res := r.runProbe(context.Background(), sp, workloads.SteadyAfter)
		if took := time.Since(start); took != 20*time.Second {
			t.Errorf("three attempts 10s apart took %s, want 20s", took)
		}
		if !res.Pass || res.Detail != "status 200 (attempt 3 of 3)" || len(sp.runs) != 1 {
			t.Errorf("result %+v, runs %d: want a pass at the third attempt, one run", res, len(sp.runs))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		r, sp := fakeProbe(spec, &scriptedCheck{pass: []bool{false}})
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second) // an interrupt at 15s
		defer cancel()
		start := time.Now()
		res := r.runProbe(ctx, sp, workloads.SteadyAfter)
		if took := time.Since(start); took != 15*time.Second {
			t.Errorf("the interrupted retries ended after %s, want at the interrupt (15s)", took)
		}
		if res.Pass || !strings.Contains(res.Detail, "attempt 2 of 3") {
			t.Errorf("result %+v: want the second attempt's failure", res)
		}
		if len(sp.runs) != 0 || len(sp.skipped) != 1 || !strings.Contains(sp.skipped[0].Why, "interrupted") {
			t.Errorf("runs %+v, skipped %+v: an interrupted run is skipped, not failed", sp.runs, sp.skipped)
		}
	})
}

// steadyWhile starts a continuously probe over the whole run and a during probe over its
// fault's window, on the run's clock.
func TestSteadyWhileOnAFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := time.Second
		cont := &steadyProbe{spec: workloads.SteadyProbe{Name: "c", When: []string{workloads.SteadyContinuously}, Every: 2 * s},
			probe: steady.Probe{Name: "c", Check: &scriptedCheck{pass: []bool{true}}}}
		during := &steadyProbe{spec: workloads.SteadyProbe{Name: "d", When: []string{workloads.SteadyDuring}, Every: s, During: "cut"},
			probe: steady.Probe{Name: "d", Check: &scriptedCheck{pass: []bool{true}}}}
		w := &workloads.Workload{Duration: 7 * s, Faults: []workloads.Fault{{Name: "cut", At: 3 * s, For: 2 * s}}}
		r := &runner{w: w, steady: &steadyState{probes: []*steadyProbe{cont, during}}}
		start := time.Now()
		runCtx, cancel := context.WithDeadline(context.Background(), start.Add(w.Duration))
		defer cancel()
		r.steadyWhile(runCtx, context.Background(), start)
		if got, want := runTimes(cont, start), []time.Duration{2 * s, 4 * s, 6 * s}; !slices.Equal(got, want) {
			t.Errorf("continuously: runs at %v, want %v", got, want)
		}
		if got, want := runTimes(during, start), []time.Duration{4 * s}; !slices.Equal(got, want) {
			t.Errorf("during the fault (3s to 5s, every 1s): runs at %v, want %v", got, want)
		}
	})
}

// A probe's continuously runs past maxProbeRuns are counted, not kept: the export stays
// bounded however long the run and however short every; a failure among them still fails the
// probe.
func TestProbeRunsBoundedOnAFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		every := 100 * time.Millisecond
		pass := make([]bool, maxProbeRuns+500)
		for i := range pass {
			pass[i] = i != maxProbeRuns+200 // one failure, past the bound
		}
		r, sp := fakeProbe(workloads.SteadyProbe{Name: "p", Every: every}, &scriptedCheck{pass: pass})
		r.w = &workloads.Workload{SteadyState: &workloads.SteadyState{}}
		start := time.Now()
		until := time.Duration(len(pass)+1) * every
		runCtx, cancel := context.WithDeadline(context.Background(), start.Add(until))
		defer cancel()
		r.probeEvery(runCtx, context.Background(), sp, workloads.SteadyContinuously, start, 0, until)
		r.runProbe(context.Background(), sp, workloads.SteadyAfter)
		s := r.steadySection(start)
		p := s.Probes[0]
		if len(p.Runs) != maxProbeRuns+1 || p.OmittedRuns != len(pass)-maxProbeRuns || p.OmittedFailures != 1 {
			t.Errorf("%d runs kept, %d omitted (%d failed); want %d kept (the after run too), %d omitted, 1 failed",
				len(p.Runs), p.OmittedRuns, p.OmittedFailures, maxProbeRuns+1, len(pass)-maxProbeRuns)
		}
		if p.Verdict != "fail" || p.Runs[len(p.Runs)-1].When != workloads.SteadyAfter {
			t.Errorf("verdict %s, last run %s: want fail (an omitted run failed), the after run kept", p.Verdict, p.Runs[len(p.Runs)-1].When)
		}
	})
}
