package engine

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/redact"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/steady"
	"github.com/mcpchaos/mcpchaos/workloads"
	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// The steady state: the workload's probes of the system's own health (package steady), run
// before the clients and faults start, continuously or during a fault while they run, and
// after they stopped. A before probe that fails means the system was not steady: the run
// starts nothing (NotSteadyError). Every run of every probe goes into the export's
// steady_state section, which the command's gate judges.

// NotSteadyError is a run that did not start because a before probe failed: the system under
// test was not in its steady state. The export says which probe and why.
type NotSteadyError struct{ Probes []string }

func (e *NotSteadyError) Error() string {
	return "the system was not steady before the run, so no fault was started: " + strings.Join(e.Probes, "; ")
}

// steadyState is one run's probes and what they saw.
type steadyState struct {
	probes    []*steadyProbe
	mu        sync.Mutex
	notBefore bool
}

type steadyProbe struct {
	spec    workloads.SteadyProbe
	env     []string // the command probe's environment, expanded
	probe   steady.Probe
	runs    []probeRun
	skipped []results.ProbeSkip
	before  *float64 // the before run's value, for "within ... of before"
	// repeated counts the continuously and during runs kept; past maxProbeRuns a run is
	// counted (omitted, omittedFailed), not kept.
	repeated, omitted, omittedFailed int
}

// maxProbeRuns bounds the continuously and during runs a probe keeps for the export: at the
// shortest every (100 ms) a one-hour run would keep 36,000. The runs past it are counted, a
// failing one still fails the probe; before and after runs are always kept.
const maxProbeRuns = 1000

type probeRun struct {
	when string
	at   time.Time
	res  steady.Result
}

// runsSteady says whether this process runs the steady state and the rollbacks: a sharded
// run leaves them to shard 0, so that a probe is judged once and a rollback is not run once
// per shard.
func (r *runner) runsSteady() bool { return r.plan.shard == nil || r.plan.shard.Index == 0 }

// prepareSteady expands the command probes' environments (a variable that is not set stops the
// run before anything starts) and adds their values and the probe URLs to the run's secrets.
func (r *runner) prepareSteady() error {
	ss := r.w.SteadyState
	if ss == nil || !r.runsSteady() {
		return nil
	}
	st := &steadyState{}
	for _, p := range ss.Probes {
		sp := &steadyProbe{spec: p}
		if c := p.Command; c != nil {
			a := workloads.Action{Kind: workloads.ActionExec, Env: c.Env}
			env, secrets, err := a.ExpandEnv(os.LookupEnv)
			if err != nil {
				return &ConfigError{Field: "steady_state", Err: fmt.Errorf("probe %s: %w", p.Name, err)}
			}
			sp.env = env
			r.secrets.Add(secrets...)
		}
		if raw := probeURL(p); raw != "" { // a token in a probe URL's query is kept out of outputs
			if u, err := url.Parse(strings.TrimPrefix(raw, workloads.TargetPlaceholder)); err == nil {
				r.secrets.AddURL(u)
			}
		}
		st.probes = append(st.probes, sp)
	}
	r.steady = st
	return nil
}

func probeURL(p workloads.SteadyProbe) string {
	switch {
	case p.HTTP != nil:
		return p.HTTP.URL
	case p.PromQL != nil:
		return p.PromQL.URL
	}
	return ""
}

// buildProbes makes each probe's check, once the target's address is known ({{target}}).
func (r *runner) buildProbes() error {
	if r.steady == nil {
		return nil
	}
	base, err := r.targetBase()
	if err != nil {
		return err
	}
	set := redact.New(r.secrets.Secrets()...)
	for _, sp := range r.steady.probes {
		p := sp.spec
		sp.probe = steady.Probe{Name: p.Name, Timeout: p.Timeout}
		if p.Tolerance != "" {
			tol, err := vocab.ParseTolerance(p.Tolerance)
			if err != nil {
				return &ConfigError{Field: "steady_state", Err: fmt.Errorf("%s: probe %s: %w", p.Where, p.Name, err)}
			}
			sp.probe.Tolerance = &tol
		}
		switch {
		case p.HTTP != nil:
			u := strings.Replace(p.HTTP.URL, workloads.TargetPlaceholder, base, 1)
			sp.probe.Check = steady.HTTP{URL: u, Status: p.HTTP.Status, BodyContains: p.HTTP.BodyContains, JSONField: p.HTTP.JSONField}
		case p.PromQL != nil:
			u := strings.Replace(p.PromQL.URL, workloads.TargetPlaceholder, base, 1)
			sp.probe.Check = steady.PromQL{URL: u, Query: p.PromQL.Query}
		case p.Command != nil:
			c := p.Command
			sp.probe.Check = steady.Command{Command: c.Command, Args: c.Args, Env: sp.env, ExitStatus: c.ExitStatus,
				OutputContains: c.OutputContains, Number: p.Tolerance != "", MaxOutput: c.MaxOutput, Redact: set.Bytes, Groups: r.groups}
		}
	}
	return nil
}

// targetBase is the target's scheme://host:port: what {{target}} stands for.
func (r *runner) targetBase() (string, error) {
	raw := r.w.Target.URL
	if r.inst != nil {
		raw = r.inst.URL
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the target's address %q has no host for {{target}}", redact.URLString(raw))
	}
	return u.Scheme + "://" + u.Host, nil
}

// steadyBefore runs the before probes one after another; false when one failed (its why is
// in the probe's run).
func (r *runner) steadyBefore(ctx context.Context) bool {
	if r.steady == nil {
		return true
	}
	ok := true
	for _, sp := range r.steady.probes {
		if !sp.spec.Runs(workloads.SteadyBefore) {
			continue
		}
		res := r.runProbe(ctx, sp, workloads.SteadyBefore)
		if res.Pass && res.Value != nil {
			v := *res.Value
			sp.before = &v
		}
		ok = ok && res.Pass
	}
	r.steady.notBefore = !ok
	return ok
}

// runProbe runs sp once and records it; a run cut by an interrupt is recorded as skipped, not
// as a failure of the system.
func (r *runner) runProbe(ctx context.Context, sp *steadyProbe, when string) steady.Result {
	at := time.Now()
	r.steady.mu.Lock()
	before := sp.before
	r.steady.mu.Unlock()
	probe := sp.probe
	if when == workloads.SteadyBefore && probe.Tolerance != nil && probe.Tolerance.NeedsBefore() {
		probe.Tolerance = nil // the before run sets the value the later runs are judged against
	}
	attempts := sp.spec.Retries + 1
	var res steady.Result
	for i := 1; ; i++ {
		res = probe.Run(ctx, before)
		if res.Pass || i >= attempts || !sleep.For(ctx, sp.spec.RetryInterval) {
			if attempts > 1 {
				res.Detail = strings.TrimSpace(fmt.Sprintf("%s (attempt %d of %d)", res.Detail, i, attempts))
			}
			break
		}
	}
	r.steady.mu.Lock()
	defer r.steady.mu.Unlock()
	if ctx.Err() != nil && !res.Pass {
		sp.skipped = append(sp.skipped, results.ProbeSkip{When: when, Why: "cut short: the run was interrupted"})
		return res
	}
	if when == workloads.SteadyContinuously || when == workloads.SteadyDuring {
		if sp.repeated >= maxProbeRuns {
			sp.omitted++
			if !res.Pass {
				sp.omittedFailed++
			}
			return res
		}
		sp.repeated++
	}
	sp.runs = append(sp.runs, probeRun{when: when, at: at, res: res})
	return res
}

// steadyWhile runs the continuously and during probes from start until runCtx ends, each in a
// goroutine of its own; a run in flight when runCtx ends finishes (bounded by its timeout)
// unless ctx (an interrupt) ends too.
func (r *runner) steadyWhile(runCtx, ctx context.Context, start time.Time) {
	if r.steady == nil {
		return
	}
	var wg sync.WaitGroup
	for _, sp := range r.steady.probes {
		if sp.spec.Runs(workloads.SteadyContinuously) {
			wg.Go(func() {
				defer guard.Catch(runCtx, "steady-state probe "+sp.spec.Name)
				r.probeEvery(runCtx, ctx, sp, workloads.SteadyContinuously, start, 0, r.w.Duration)
			})
		}
		if sp.spec.Runs(workloads.SteadyDuring) {
			from, until := r.faultWindow(sp.spec.During)
			wg.Go(func() {
				defer guard.Catch(runCtx, "steady-state probe "+sp.spec.Name)
				r.probeEvery(runCtx, ctx, sp, workloads.SteadyDuring, start, from, until)
			})
		}
	}
	wg.Wait()
}

// faultWindow is when the named fault is in force, as offsets from the run's start.
func (r *runner) faultWindow(name string) (from, until time.Duration) {
	for _, f := range r.w.Faults {
		if f.Name == name {
			return f.At, f.Until(r.w.Duration)
		}
	}
	return 0, 0
}

// probeEvery runs sp every `every` within [from, until) of the run: first at from plus
// min(every, half the window), so that a window shorter than every still gets one run, away
// from the moment the fault goes on.
func (r *runner) probeEvery(runCtx, ctx context.Context, sp *steadyProbe, when string, start time.Time, from, until time.Duration) {
	every := sp.spec.Every
	next := from + min(every, (until-from)/2)
	for next < until {
		if !sleep.For(runCtx, time.Until(start.Add(next))) {
			return
		}
		r.runProbe(ctx, sp, when)
		next += every
		if elapsed := time.Since(start); next < elapsed { // a slow probe: skip the turns it took
			next = elapsed + every - (elapsed-from)%every
		}
	}
}

// steadyAfter runs the after probes once the clients have stopped; an interrupted run skips
// them (what it would see is the interruption's).
func (r *runner) steadyAfter(ctx context.Context, interrupted bool) {
	if r.steady == nil {
		return
	}
	for _, sp := range r.steady.probes {
		if !sp.spec.Runs(workloads.SteadyAfter) {
			continue
		}
		if interrupted || ctx.Err() != nil {
			r.steady.mu.Lock()
			sp.skipped = append(sp.skipped, results.ProbeSkip{When: workloads.SteadyAfter, Why: "the run was interrupted"})
			r.steady.mu.Unlock()
			continue
		}
		r.runProbe(ctx, sp, workloads.SteadyAfter)
	}
}

// steadySection is the export's steady_state section, times from start (the clients' start,
// or the time a run that never started them was given up).
func (r *runner) steadySection(start time.Time) *results.SteadyState {
	if r.steady == nil {
		return nil
	}
	r.steady.mu.Lock()
	defer r.steady.mu.Unlock()
	s := &results.SteadyState{Title: r.w.SteadyState.Title}
	if r.steady.notBefore {
		s.Verdict = results.NotSteadyBefore
	}
	for _, sp := range r.steady.probes {
		p := results.SteadyProbe{Name: sp.spec.Name, Kind: sp.spec.Kind(), When: sp.spec.When, During: sp.spec.During,
			Tolerance: sp.spec.Tolerance, Runs: []results.ProbeRun{}, Skipped: sp.skipped,
			OmittedRuns: sp.omitted, OmittedFailures: sp.omittedFailed}
		for _, pr := range sp.runs {
			p.Runs = append(p.Runs, results.ProbeRun{When: pr.when, AtS: roundS(pr.at.Sub(start)), TookS: roundS(pr.res.Took),
				Value: pr.res.Value, Detail: pr.res.Detail, Pass: pr.res.Pass, Why: pr.res.Why})
		}
		s.Probes = append(s.Probes, p)
	}
	s.Judge()
	return s
}

// notSteady is the export and error of a run whose before probes failed: nothing started.
func (r *runner) notSteady(at time.Time) (*results.Export, error) {
	var why []string
	for _, sp := range r.steady.probes {
		for _, pr := range sp.runs {
			if !pr.res.Pass {
				why = append(why, fmt.Sprintf("probe %s: %s", sp.spec.Name, pr.res.Why))
			}
		}
	}
	problem := "not steady before the run, so no fault and no client was started: " + strings.Join(why, "; ")
	r.secrets.Value(&problem)
	if r.opts.onProblems != nil {
		r.opts.onProblems([]string{problem})
	}
	exp, err := r.export(at, time.Now(), false, []string{problem}, true)
	if err != nil {
		return nil, err
	}
	exp.SteadyState = r.steadySection(at)
	return exp, &NotSteadyError{Probes: why}
}
