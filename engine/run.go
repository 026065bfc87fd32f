package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/generator"
	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/redact"
	"github.com/mcpchaos/mcpchaos/refserver"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// runner holds one run's parts, so that teardown can find them on every exit path.
type runner struct {
	plan    *Plan
	w       *workloads.Workload
	opts    runOptions
	guard   *guard.Guard
	inst    *refserver.Instance
	inj     faults.Injector
	fleets  []*fleet.Fleet
	recs    []*metrics.Recorder
	proxies map[string]string // group → proxy listen address
	tgt     targetInfo        // what setUp learnt about the target (setup.go)

	log faultLog // what the faults and actions did (faultlog.go)
	rel release  // restart, rebalance, scale, exec, wait_for (release.go)

	abortMu  sync.Mutex
	aborted  *gate.Threshold
	abortWhy string

	id   string        // the run's id: in the export, the live metrics and the progress view
	late time.Duration // how long after the plan's StartAt a late shard started
	gen  *generator.Sampler

	secrets *redact.Set // cut out of all that leaves the run (secrets.go)
	// groups are the process groups of the commands the run started (exec actions, wait_for,
	// command probes): what is left in them is ended when the run ends (endGroups).
	groups *faults.Groups

	steady         *steadyState   // the steady-state probes, nil when none (steady.go)
	rollbacks      []rollbackPlan // run at the end of every run (rollback.go)
	rollbacksReady bool
	began          time.Time // set-up, then the clients' start: what rollback times count from

	leakMu sync.Mutex
	leak   *results.SessionLeak // the session-leak check's verdict (leakcheck.go)
}

// Run carries out the plan: it sets up the target, the proxies and the fleets, runs them for
// the planned time (or until ctx ends: an interrupt), and returns the export. It writes no
// files and prints nothing (WithStderr receives what must be said at once: a panic's stack).
//
// Which errors come with an export (tested by TestRunExportErrorContract):
//
//	nil             export: the run went as planned (its thresholds judged in exp.Thresholds)
//	*MeasureError   export: the run went on but could not measure what it was asked; run.error says why
//	*AbortError     export: a threshold with abort_on_fail failed for good; run.aborted says which
//	*PanicError     export: a goroutine of the run panicked; run.error says where (stack on stderr)
//	*SetupError     export: the run could not start (every group at zero); run.error "could not start: ..."
//	*NotSteadyError export: a before probe of the steady state failed: nothing started (steady.go)
//	*RollbackError  export: the run went as planned, but a rollback failed (rollback.go)
//	ErrInterrupted  export once the clients have started (marked interrupted); none during set-up
//	                or while waiting for the plan's start time
//	*ConfigError    none: a mistake in what was asked (no plan from NewPlan, a header variable unset,
//	                an unreadable CA file, a fault the toxiproxy-server refuses), found before anything ran
//	other errors    none: an observer that could not start (its error), a plan's start time that
//	                passed during set-up; and a *PanicError from Run's own goroutine has none
//
// A caller can thus write the export whenever exp != nil, and map the error to its own exit
// status, as cmd/mcpchaos does. The workload's rollbacks run on every exit after the run's
// checks (a *ConfigError has none), before Run returns; the export records them.
func Run(ctx context.Context, plan *Plan, opts ...Option) (exp *results.Export, err error) {
	if err := checkRunArgs(ctx, plan); err != nil {
		return nil, err
	}
	sig := ctx // ends on an interrupt; ctx also ends on a panic in a goroutine of the run
	ctx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	// The run works on its own copy of the workload: what it hands out (the export, the
	// observers' view) never reaches the plan, which may run again.
	r := &runner{plan: plan, w: plan.workload.Clone(), opts: newRunOptions(opts), proxies: map[string]string{}, id: newRunID(), gen: generator.New()}
	r.secrets = runSecrets(r.w)
	r.groups = &faults.Groups{}
	r.opts.abandon.addGroups(r.groups)
	defer r.opts.abandon.forgetGroups(r.groups)
	r.opts.stderr = r.secrets.Writer(r.opts.stderr)
	defer func() { exp, err = r.redactOut(exp, err) }() // runs last: after the recover below
	r.guard = guard.New(stopAll, r.opts.stderr)
	ctx = guard.With(ctx, r.guard)
	defer r.close()
	defer func() { exp = r.endGroups(exp) }()               // after the rollbacks: what any command left running
	defer func() { exp, err = r.rollBack(ctx, exp, err) }() // every exit, before the proxies go (rollback.go)
	defer func() {                                          // a panic in the run's own goroutine: reported; r.close still removes the proxies
		if v := recover(); v != nil {
			guard.Recovered(ctx, "run", v)
			exp, err = nil, &PanicError{Msg: fmt.Sprintf("panic in run: %v (stack above)", v)}
		}
	}()
	if err := CheckDescriptors(r.w, 1); err != nil { // descriptors.go: this machine's limit
		return nil, err
	}
	setUpAt := time.Now()
	r.began = setUpAt
	if err := r.prepareSteady(); err != nil {
		return nil, err
	}
	if err := r.prepareRollbacks(); err != nil {
		return nil, err
	}
	if err := r.setUp(ctx); err != nil {
		var ce *ConfigError
		switch {
		case sig.Err() != nil:
			return nil, ErrInterrupted // interrupted while setting up: nothing ran, nothing to export
		case errors.As(err, &ce):
			return nil, err // a mistake in what was asked: nothing started, nothing to export
		}
		return r.failedExport(setUpAt, err)
	}
	if err := r.buildProbes(); err != nil {
		return nil, err
	}
	if !r.steadyBefore(ctx) { // steady.go: a system not steady gets no fault
		if sig.Err() != nil {
			return nil, ErrInterrupted
		}
		return r.notSteady(setUpAt)
	}
	start, late, err := startTime(time.Now(), plan)
	if err != nil {
		return nil, err
	}
	r.late = late
	if r.opts.onStart != nil {
		r.opts.onStart(start)
	}
	r.began = start
	return r.measure(ctx, sig, start)
}

// startLead is how far ahead of the moment set-up ended the groups' common clock starts: every
// group's clock starts together, at one instant all of them were started before.
const startLead = 20 * time.Millisecond

// startTime is when the run's clock starts, set-up having ended at now: startLead ahead, or the
// plan's StartAt if that is later. A StartAt less than startLead ahead starts startLead ahead,
// late by less than startLead. A StartAt already passed is an error, except for a shard: a
// shard that comes late (its pod scheduled after the others started) joins at once rather than
// failing the whole run; its clients run the plan late by late, which the export says
// (run.shard.late_s and a note), and the merge aligns on wall-clock time.
func startTime(now time.Time, plan *Plan) (start time.Time, late time.Duration, err error) {
	start = now.Add(startLead)
	switch {
	case plan.startAt.IsZero():
		return start, 0, nil
	case !start.After(plan.startAt):
		return plan.startAt, 0, nil
	case plan.shard != nil || plan.startAt.After(now):
		return start, start.Sub(plan.startAt), nil
	}
	return time.Time{}, 0, fmt.Errorf("the start time %s passed while this run was setting up; give a time further ahead", plan.startAt.Format(time.RFC3339))
}

// checkRunArgs refuses what Run cannot start from, before it touches anything: no context, no
// plan, or a Plan that NewPlan did not make (the zero Plan).
func checkRunArgs(ctx context.Context, plan *Plan) error {
	switch {
	case ctx == nil:
		return &ConfigError{Field: "context", Err: errors.New("engine.Run: no context; pass one, e.g. context.Background()")}
	case plan == nil:
		return &ConfigError{Field: "plan", Err: errors.New("engine.Run: no plan; make one with engine.NewPlan(workload, options...)")}
	case plan.workload == nil:
		return &ConfigError{Field: "plan", Err: errors.New("engine.Run: an empty Plan; a plan comes from engine.NewPlan(workload, options...), which checks it")}
	}
	return nil
}

// measure runs the fleets, the fault schedule, the health watcher and the observers from
// start to the planned end (or an interrupt, an abort, a panic), then builds the export.
func (r *runner) measure(ctx, sig context.Context, start time.Time) (*results.Export, error) {
	runCtx, cancel := context.WithDeadline(ctx, start.Add(r.w.Duration))
	defer cancel()
	tl := &timeline{every: results.SampleInterval(r.w.Duration)}
	obs := &observing{v: newView(r.w.Name, r.plan.Shard(), r.w.Duration, r.fleets, r.recs), obs: []Observer{tl}}
	obs.v.Start = start
	obs.v.sessionless = r.tgt.noIDs || r.tgt.generation == wire.Stateless
	obs.v.servesAnyID = r.servesAnyID()
	obs.v.RunID, obs.v.Labels, obs.v.phases, obs.v.faultsNow = r.id, r.plan.Labels(), r.w.Phases, r.log.inForce
	obs.v.faultsDuring = r.log.during
	obs.v.Generator = r.gen.Live
	for _, f := range r.w.Faults {
		obs.v.faultNames = append(obs.v.faultNames, f.Name)
	}
	if early := abortThresholds(r.plan.thresholds); len(early) > 0 {
		obs.obs = append(obs.obs, &watchdog{ths: early, abort: r.abortOn(cancel)})
	}
	obs.obs = append(obs.obs, r.opts.observers...)
	for i, o := range obs.obs {
		if err := o.Start(obs.v); err != nil {
			obs.obs = obs.obs[:i]
			obs.stop(ctx, time.Now())
			return nil, err
		}
	}
	// Before the start (a StartAt ahead): nothing runs yet; an interrupt ends the wait.
	if !sleep.For(ctx, time.Until(start)-startLead) {
		obs.stop(ctx, time.Now())
		return nil, ErrInterrupted
	}
	var wg sync.WaitGroup
	var faultErr, actionErr error
	wg.Go(func() {
		defer guard.Catch(runCtx, "fault schedule")
		faultErr = faults.RunSchedule(runCtx, r.inj, start, r.schedule(), r.noteFault)
	})
	wg.Go(func() {
		defer guard.Catch(runCtx, "actions")
		actionErr = r.runActions(runCtx, start)
	})
	h := r.health(start)
	wg.Go(func() { h.run(runCtx, min(results.SampleInterval(r.w.Duration), time.Second)) })
	wg.Go(func() { r.gen.Run(runCtx) })
	wg.Go(func() { r.steadyWhile(runCtx, ctx, start) })
	for _, f := range r.fleets {
		wg.Go(func() { f.Run(runCtx, start) })
	}
	if lc, ok := r.planLeakCheck(); ok {
		wg.Go(func() {
			defer guard.Catch(runCtx, "session-leak check")
			r.runLeakCheck(runCtx, start, lc)
		})
	}
	obs.start(runCtx)
	wg.Wait()
	end := time.Now()
	r.countRunTwice() // before the observers stop: /metrics says finished only with every counter final
	obs.stop(ctx, end)
	r.steadyAfter(ctx, sig.Err() != nil)
	r.rel.err = actionErr
	return r.finish(start, end, sig.Err() != nil, h, faultErr, tl.result)
}

// abortOn is the watchdog's abort: it records the threshold and ends the run.
func (r *runner) abortOn(cancel context.CancelFunc) func(gate.Threshold, string) {
	return func(th gate.Threshold, why string) {
		r.abortMu.Lock()
		r.aborted, r.abortWhy = &th, why
		r.abortMu.Unlock()
		fmt.Fprintf(r.opts.stderr, "mcpchaos: %s; stopping the run\n", why)
		cancel()
	}
}

// finish builds the export of a run that went on, and the error that says how it ended.
func (r *runner) finish(start, end time.Time, interrupted bool, h *health, faultErr error, tl *results.Timeline) (*results.Export, error) {
	panicked := r.guard.First()
	problems, fatal := h.problems()
	if faultErr != nil {
		problems = append(problems, "fault schedule: "+faultErr.Error())
	}
	if r.rel.err != nil {
		problems = append(problems, "action failed: "+r.rel.err.Error())
	}
	if panicked != nil {
		problems = append([]string{panicked.Error() + " (stack on stderr); the run was stopped"}, problems...)
	}
	if line := r.noSessions(); line != "" && !interrupted && panicked == nil {
		problems = append(problems, line)
		fatal = true
	} else if ps := fleet.ProblemsOf(r.fleets, cutsStreams(r.w.Faults)); !interrupted && panicked == nil {
		ps = append(ps, r.measuredNothing(ps)...) // measured.go
		ps = append(ps, r.shortfalls()...)
		ps = append(ps, r.unmeasurableDeaths()...) // measured.go
		ps = append(ps, r.lateStarts()...)         // latestarts.go
		if len(ps) > 0 {
			problems = append(problems, r.explainProblems(ps)...) // the run could not measure what it was asked (clients/fleet/problems.go)
			fatal = true
		}
	}
	fatal = fatal || faultErr != nil || r.rel.err != nil || panicked != nil
	r.secrets.Value(&problems)
	if r.opts.onProblems != nil {
		r.opts.onProblems(problems)
	}
	exp, err := r.export(start, end, interrupted, problems, fatal)
	if err != nil {
		return nil, err
	}
	exp.Timeline = tl
	exp.SteadyState = r.steadySection(start)
	exp.Generator = generatorReport(r.gen, exp)
	exp.Attribute() // whose the transport errors are (results/causes.go)
	exp.Thresholds = results.Judge(exp, r.plan.thresholds)
	r.abortMu.Lock()
	aborted, why := r.aborted, r.abortWhy
	r.abortMu.Unlock()
	if aborted != nil {
		exp.Run.Aborted = why
		for i := range exp.Thresholds {
			if exp.Thresholds[i].Expr == aborted.Expr && exp.Thresholds[i].AbortOnFail {
				exp.Thresholds[i].AbortedRun = true
				break
			}
		}
	}
	switch {
	case panicked != nil:
		return exp, &PanicError{Msg: panicked.Error()}
	case interrupted:
		return exp, ErrInterrupted
	case aborted != nil:
		return exp, &AbortError{Reason: why}
	case fatal:
		return exp, &MeasureError{Problems: problems}
	}
	return exp, nil
}

// close tears everything down; safe on every exit path.
func (r *runner) close() {
	for _, f := range r.fleets {
		f.Close() // node workers, if a group had any (a run that never started them too)
	}
	if r.inj != nil {
		if err := r.inj.Close(); err != nil {
			fmt.Fprintln(r.opts.stderr, "mcpchaos: removing proxies:", err)
		}
		if ext, ok := faults.Unshield(r.inj).(*faults.External); ok {
			r.opts.abandon.forget(ext)
		}
	}
	if r.inst != nil {
		r.inst.Close()
	}
}

// health is the run's watcher of its target (by URL) and its external toxiproxy-server.
func (r *runner) health(start time.Time) *health {
	h := &health{start: start, recs: r.recs, dial: dialTCP}
	if r.w.Target.Builtin == nil {
		if u, err := url.Parse(r.w.Target.URL); err == nil {
			h.dialAddr = wire.HostPort(u)
		}
	}
	if ext, ok := faults.Unshield(r.inj).(*faults.External); ok {
		h.ext = ext
	}
	return h
}

func joinProblems(p []string) string { return strings.Join(p, "; ") }

// cutsStreams says whether a workload's faults drop connections, so that its clients should
// have replayed.
func cutsStreams(fs []workloads.Fault) bool {
	return slices.ContainsFunc(fs, func(f workloads.Fault) bool {
		return f.Toxic != "latency" && f.Toxic != "bandwidth" && f.Toxic != "slicer"
	})
}
