package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/clients"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/refserver"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

type runFlags struct {
	out      string
	progress string // auto, bars, lines, off
	quiet    bool
	target   targetFlags // --target, --toxiproxy and the target's connection settings (setup.go)

	formats       string   // companions of the JSON export: csv, hgrm, junit, or none
	thresholds    []string // --threshold: judged at the end, beside the workload's
	abortOn       []string // --threshold-abort: stop the run as soon as one fails for good
	shard         string   // --shard INDEX/COUNT
	startAt       string   // --start-at RFC 3339 time
	metricsAddr   string   // --metrics-addr HOST:PORT: live Prometheus metrics
	metricsPublic bool
	procs         int // --procs N: run as N local shard processes (procs.go)
}

func newRunCmd() *cobra.Command {
	var fl runFlags
	cmd := &cobra.Command{
		Use:   "run WORKLOAD",
		Short: "Run a workload: a fleet of sessions, faults, TTLs running out; export the numbers",
		Long: `Run a workload. WORKLOAD is a file path or the name of a built-in workload
(` + joinNames() + `).

The run starts the built-in reference MCP server, one Toxiproxy proxy per client group in
front of it, and the client fleet; applies the fault schedule; and when the planned time is
up writes the JSON export (--out, default ./mcpchaos-results/<workload>-<time>.json) with its
companions beside it (--formats: CSV summary, .hgrm per histogram, JUnit XML) and prints a
summary. Ctrl-C stops the run early: the partial export is still written, marked
interrupted, and the exit status is 130.

Thresholds (the workload's thresholds: section, and --threshold) are judged at the end and
printed as a table; if any fails the exit status is 99. A threshold with abort_on_fail (or
given with --threshold-abort) stops the run as soon as it has failed for good.

--shard INDEX/COUNT runs every COUNT-th client of each group, starting with client INDEX
(INDEX counts from 0), with its own proxies; --start-at makes the shards start together.
Merge their exports with mcpchaos merge; a shard records its thresholds but leaves the
verdict to the merge (except for abort_on_fail, which stops it with status 99).`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			switch fl.progress {
			case "auto", "bars", "lines", "off", "json":
			default:
				return usagef("--progress %q: want auto, bars, lines, json or off", fl.progress)
			}
			w, err := workloads.Resolve(a[0])
			if err != nil {
				return err
			}
			if w, err = fl.target.apply(w); err != nil {
				return err
			}
			if fl.procs < 0 || fl.procs > 64 {
				return usagef("--procs %d: want 1 to 64 processes", fl.procs)
			}
			if fl.procs > 1 {
				if fl.shard != "" || fl.startAt != "" {
					return usagef("--procs shards the run itself; leave out --shard and --start-at")
				}
				return runProcs(cmd.Context(), a[0], w, fl, fl.procs, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			return run(cmd.Context(), w, fl, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&fl.out, "out", "o", "", "where to write the JSON export (default ./mcpchaos-results/<workload>-<time>.json)")
	f.StringVar(&fl.progress, "progress", "auto", "live progress: auto (bars on a terminal, lines elsewhere), bars, lines, json (a status line a second, for a parent process), off")
	f.BoolVarP(&fl.quiet, "quiet", "q", false, "print no summary table")
	f.StringVar(&fl.formats, "formats", strings.Join(results.Formats, ","), "companions written beside the JSON export: csv, hgrm, junit (comma-separated), or none")
	f.StringArrayVar(&fl.thresholds, "threshold", nil, "a threshold judged at the end, e.g. 'probe.misattributed_errors == 0' (repeatable; adds to the workload's)")
	f.StringArrayVar(&fl.abortOn, "threshold-abort", nil, "a threshold that stops the run as soon as it fails for good, e.g. 'overall.misattributed_errors < 10' (repeatable)")
	f.IntVar(&fl.procs, "procs", 1, "run as this many shard processes on this machine, one progress view, exports merged")
	f.StringVar(&fl.shard, "shard", "", "run one shard of the fleet: INDEX/COUNT, INDEX from 0 (e.g. 0/4 ... 3/4)")
	f.StringVar(&fl.startAt, "start-at", "", "start the clients at this RFC 3339 time (align shards), e.g. 2026-01-02T15:04:05Z")
	f.StringVar(&fl.metricsAddr, "metrics-addr", "", "serve live counters and histograms in Prometheus format at http://HOST:PORT/metrics")
	f.BoolVar(&fl.metricsPublic, "metrics-public", false, "allow a non-loopback --metrics-addr")
	fl.target.register(f)
	return cmd
}

// runner holds one run's parts, so that teardown can find them on every exit path.
type runner struct {
	w       *workloads.Workload
	inst    *refserver.Instance
	inj     faults.Injector
	fleets  []*clients.Fleet
	recs    []*metrics.Group
	proxies map[string]string // group → proxy listen address
	tgt     targetInfo        // what setUp learnt about the target (setup.go)

	faultMu  sync.Mutex
	faultLog []results.FaultAt
	ext      atomic.Pointer[faults.External] // r.inj when external, for a second signal (main.go)
}

// runPlan is what the run's flags resolve to, checked before anything is started.
type runPlan struct {
	shard      *results.Shard
	startAt    time.Time
	formats    []string
	thresholds []gate.Threshold
}

func (fl *runFlags) plan(w *workloads.Workload) (runPlan, error) {
	var p runPlan
	var err error
	if fl.shard != "" {
		if p.shard, err = parseShard(fl.shard); err != nil {
			return p, err
		}
	}
	if fl.startAt != "" {
		if p.startAt, err = parseStartAt(fl.startAt, time.Now()); err != nil {
			return p, err
		}
		if p.shard != nil {
			at := p.startAt.UTC()
			p.shard.StartAt = &at
		}
	}
	if p.formats, err = parseFormats(fl.formats); err != nil {
		return p, err
	}
	if p.thresholds, err = runThresholds(w, fl.thresholds); err != nil {
		return p, err
	}
	abort, err := runThresholds(&workloads.Workload{Name: w.Name, Groups: w.Groups}, fl.abortOn)
	if err != nil {
		return p, usagef("%s", strings.Replace(err.Error(), "--threshold", "--threshold-abort", 1))
	}
	for _, th := range abort {
		if err := th.EarlyError(); err != nil {
			return p, usagef("--threshold-abort %q: %v", th.Expr, err)
		}
		th.AbortOnFail = true
		p.thresholds = append(p.thresholds, th)
	}
	if fl.metricsAddr != "" {
		if err := checkMetricsAddr(fl.metricsAddr, fl.metricsPublic); err != nil {
			return p, err
		}
	}
	return p, nil
}

func parseFormats(s string) ([]string, error) {
	if s == "" || s == "none" {
		return nil, nil
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(results.Formats, f) {
			return nil, usagef("--formats %q: unknown format %q; use a comma-separated list of %s, or none", s, f, strings.Join(results.Formats, ", "))
		}
		out = append(out, f)
	}
	return out, nil
}

func run(ctx context.Context, w *workloads.Workload, fl runFlags, stdout, stderr io.Writer) (err error) {
	plan, err := fl.plan(w)
	if err != nil {
		return err
	}
	w = shardWorkload(w, plan.shard)
	sig := ctx // ends on a signal; ctx also ends on a panic in a goroutine of the run
	ctx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	guard.Arm(stopAll)
	defer guard.Disarm()
	r := &runner{w: w, proxies: make(map[string]string)}
	defer r.close()
	secondSignal.Store(r) // a second signal removes an external toxiproxy-server's proxies before exiting
	defer secondSignal.Store(nil)
	defer func() { // a panic in the run's own goroutine: reported; r.close still removes the proxies
		if v := recover(); v != nil {
			guard.Recovered("run", v)
			err = fmt.Errorf("panic in run: %v (stack above)", v)
		}
	}()
	setUpAt := time.Now()
	if err := r.setUp(ctx); err != nil {
		if sig.Err() != nil {
			return errInterrupted // interrupted while setting up: nothing ran, nothing to export
		}
		if exitCode(err) == exitUsage {
			return err // a mistake in the workload or flags: nothing started, nothing to export
		}
		return r.failedExport(fl, plan, setUpAt, err, stdout)
	}

	start := time.Now().Add(20 * time.Millisecond) // every group's clock starts together
	if !plan.startAt.IsZero() {
		if start.After(plan.startAt) {
			return fmt.Errorf("--start-at %s passed while this run was setting up; give the shards a time further ahead", plan.startAt.Format(time.RFC3339))
		}
		start = plan.startAt
		fmt.Fprintf(stderr, "mcpchaos: %s%s ready; starting at %s (in %s)\n", w.Name, describeShard(plan.shard),
			start.UTC().Format(time.RFC3339Nano), time.Until(start).Round(time.Second))
	}
	runCtx, cancel := context.WithDeadline(ctx, start.Add(w.Duration))
	defer cancel()

	smp := newSampler(start, results.SampleInterval(w.Duration), r.fleets, r.recs)
	if fl.metricsAddr != "" {
		labels := map[string]string{"workload": w.Name}
		if plan.shard != nil {
			labels["shard"] = strconv.Itoa(plan.shard.Index)
		}
		bound, stopMetrics, err := serveMetrics(fl.metricsAddr, r.recs, func(i int) int64 { return smp.believed[i].Load() }, labels)
		if err != nil {
			return err
		}
		defer stopMetrics()
		fmt.Fprintf(stderr, "mcpchaos: live metrics at http://%s/metrics\n", bound)
	}
	// Before the start (a --start-at ahead): nothing runs yet; Ctrl-C ends the wait.
	if !sleepCtx(ctx, time.Until(start)-20*time.Millisecond) {
		return errInterrupted
	}

	var (
		wg       sync.WaitGroup
		faultErr error
		abortMu  sync.Mutex
		aborted  *gate.Threshold
		abortWhy string
	)
	wg.Go(func() {
		defer guard.Catch("fault schedule")
		guard.Enter("fault schedule")
		faultErr = faults.RunSchedule(runCtx, r.inj, start, r.schedule(), r.noteFault(start))
	})
	h := r.health(start)
	wg.Go(func() { h.run(runCtx, min(results.SampleInterval(w.Duration), time.Second)) })
	for _, f := range r.fleets {
		wg.Go(func() { f.Run(runCtx, start) })
	}
	wg.Go(func() {
		defer guard.Catch("timeline sampler")
		smp.run(runCtx)
	})
	if early := abortThresholds(plan.thresholds); len(early) > 0 {
		wd := &watchdog{ths: early, recs: r.recs, start: start, abort: func(th gate.Threshold, why string) {
			abortMu.Lock()
			aborted, abortWhy = &th, why
			abortMu.Unlock()
			fmt.Fprintf(stderr, "mcpchaos: %s; stopping the run\n", why)
			cancel()
		}}
		wg.Go(func() {
			defer guard.Catch("threshold watchdog")
			wd.run(runCtx, 200*time.Millisecond)
		})
	}
	stopProgress := startProgress(fl.progress, stderr, start, w.Duration, localStatus(r.fleets, r.recs))
	wg.Wait()
	stopProgress()
	end := time.Now()

	interrupted := sig.Err() != nil
	panicked := guard.Disarm()
	problems, fatal := h.problems()
	if faultErr != nil {
		problems = append(problems, "fault schedule: "+faultErr.Error())
	}
	if panicked != nil {
		problems = append([]string{panicked.Error() + " (stack on stderr); the run was stopped"}, problems...)
	}
	if line := r.noSessions(); line != "" && !interrupted && panicked == nil {
		problems = append(problems, line)
		fatal = true
	}
	fatal = fatal || faultErr != nil || panicked != nil
	exp, err := r.export(start, end, interrupted, problems, fatal)
	if err != nil {
		return err
	}
	exp.Run.Shard = plan.shard
	exp.Timeline = smp.timeline(end)
	exp.Thresholds = results.Judge(exp, plan.thresholds)
	if aborted != nil {
		exp.Run.Aborted = abortWhy
		for i := range exp.Thresholds {
			if exp.Thresholds[i].Expr == aborted.Expr && exp.Thresholds[i].AbortOnFail {
				exp.Thresholds[i].AbortedRun = true
				break
			}
		}
	}
	out := fl.out
	if out == "" {
		out = results.DefaultPath(w.Name, start)
	}
	if err := results.WriteFile(out, exp); err != nil {
		return fmt.Errorf("writing the export: %w", err)
	}
	written, err := results.WriteCompanions(out, exp, plan.formats)
	if err != nil {
		return err
	}
	if !fl.quiet {
		status := ""
		switch {
		case interrupted:
			status = " (interrupted)"
		case aborted != nil:
			status = " (aborted by a threshold)"
		}
		fmt.Fprintf(stdout, "\nmcpchaos: %s%s against %s, %s%s\n\n", w.Name, describeShard(plan.shard), exp.Run.Target,
			end.Sub(start).Round(time.Millisecond), status)
		if err := results.WriteSummary(stdout, exp); err != nil {
			return err
		}
		if len(problems) > 0 {
			fmt.Fprintf(stdout, "\n")
		}
		for _, p := range problems {
			fmt.Fprintf(stdout, "problem: %s\n", p)
		}
	}
	note := ""
	if plan.shard != nil {
		note = "(a shard's thresholds are judged on the merged result: mcpchaos merge)"
	}
	if err := printThresholds(stdout, exp.Thresholds, note); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nexport: %s\n", out)
	if len(written) > 0 {
		fmt.Fprintf(stdout, "        %s\n", strings.Join(written, "\n        "))
	}
	switch {
	case panicked != nil:
		return fmt.Errorf("%s; the export was written", panicked.Error())
	case interrupted:
		return errInterrupted
	case aborted != nil:
		return &gateError{exp.Run.Aborted}
	case fatal:
		return fmt.Errorf("the run could not measure what it was asked to: %s", strings.Join(problems, "; "))
	case plan.shard == nil:
		return thresholdsGate(exp.Thresholds)
	}
	return nil
}

// abortThresholds are the thresholds to judge while the run goes on.
func abortThresholds(ths []gate.Threshold) []gate.Threshold {
	var out []gate.Threshold
	for _, th := range ths {
		if th.AbortOnFail && th.Early() {
			out = append(out, th)
		}
	}
	return out
}

// sleepCtx waits d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// schedule turns the workload's faults into the injector's schedule.
func (r *runner) schedule() []faults.Scheduled {
	var s []faults.Scheduled
	for _, f := range r.w.Faults {
		var proxies []string
		for _, g := range r.w.Groups {
			if f.AppliesTo(g.Name) {
				proxies = append(proxies, proxyName(g.Name))
			}
		}
		s = append(s, faults.Scheduled{
			Fault:   faults.Toxic{Name: f.Name, Type: f.Toxic, Stream: f.Stream, Attributes: f.Attributes},
			Proxies: proxies,
			At:      f.At,
			For:     f.For,
		})
	}
	return s
}

// noteFault records when each fault really went on and off each proxy.
func (r *runner) noteFault(start time.Time) func(faults.Change) {
	return func(c faults.Change) {
		r.faultMu.Lock()
		defer r.faultMu.Unlock()
		if c.Added {
			fa := results.FaultAt{Fault: c.Fault, Proxy: c.Proxy, AddedAtS: c.At.Seconds()}
			if c.Err != nil {
				fa.Error = c.Err.Error()
			}
			r.faultLog = append(r.faultLog, fa)
			return
		}
		for i := len(r.faultLog) - 1; i >= 0; i-- {
			if fa := &r.faultLog[i]; fa.Fault == c.Fault && fa.Proxy == c.Proxy && fa.RemovedAtS == 0 {
				fa.RemovedAtS = c.At.Seconds()
				break
			}
		}
	}
}

// export builds the export; problems go to run.error when fatal (the run could not measure
// what it was asked to), to run.notes otherwise (a target that went away and came back).
func (r *runner) export(start, end time.Time, interrupted bool, problems []string, fatal bool) (*results.Export, error) {
	run := results.Run{
		Tool:           "mcpchaos",
		ToolVersion:    version,
		Workload:       r.w.Name,
		WorkloadSource: r.w.Source,
		WorkloadHash:   r.w.Hash,
		Start:          start,
		End:            end,
		PlannedSeconds: r.w.Duration.Seconds(),
		Interrupted:    interrupted,
		Proxies:        r.proxies,
	}
	r.describeTarget(&run)
	if fatal {
		run.Error = strings.Join(problems, "; ")
	} else {
		run.Notes = append(run.Notes, problems...)
	}
	for _, f := range r.fleets {
		if p := f.Protocol(); p != "" {
			run.NegotiatedProtocol = p
			break
		}
	}
	snaps := make([]*metrics.Snapshot, len(r.recs))
	for i, rec := range r.recs {
		snaps[i] = rec.Snapshot()
	}
	exp, err := results.Build(run, snaps)
	if err != nil {
		return nil, err
	}
	r.faultMu.Lock()
	exp.Faults = append([]results.FaultAt(nil), r.faultLog...)
	r.faultMu.Unlock()
	return exp, nil
}

// close tears everything down; safe on every exit path.
func (r *runner) close() {
	if r.inj != nil {
		if err := r.inj.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "mcpchaos: removing proxies:", err)
		}
	}
	if r.inst != nil {
		r.inst.Close()
	}
}

// health is the run's watcher of its target (by URL) and its external toxiproxy-server.
func (r *runner) health(start time.Time) *health {
	h := &health{start: start, recs: r.recs}
	if r.w.Target.Builtin == nil {
		if u, err := url.Parse(r.w.Target.URL); err == nil {
			h.dialAddr = clients.HostPort(u)
		}
	}
	if ext, ok := r.inj.(*faults.External); ok {
		h.ext = ext
	}
	return h
}

// noSessions says, for a target that has sessions, that none was ever established, and what
// the clients got instead ("" when some were).
func (r *runner) noSessions() string {
	if r.tgt.generation == clients.Stateless {
		return ""
	}
	var started int64
	errs := map[string]int64{}
	for _, rec := range r.recs {
		s := rec.Snapshot()
		started += s.Counters[metrics.SessionsStarted]
		for k, n := range s.Errors {
			if n > 0 {
				errs[metrics.ErrorKind(k).String()] += n
			}
		}
	}
	if started > 0 || len(r.recs) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, errs[k]))
	}
	got := "no answer at all"
	if len(parts) > 0 {
		got = "errors: " + strings.Join(parts, ", ")
	}
	return "no session was ever established: every initialize failed (" + got + "), so nothing was measured"
}

// failedExport writes the export of a run that could not start (the target unreachable, its
// DNS name unknown, its certificate refused, the toxiproxy-server gone): every group at zero
// and run.error saying why; the error is returned, for exit status 1.
func (r *runner) failedExport(fl runFlags, plan runPlan, at time.Time, cause error, stdout io.Writer) error {
	recs := make([]*metrics.Group, len(r.w.Groups))
	for i, g := range r.w.Groups {
		if i < len(r.recs) {
			recs[i] = r.recs[i]
		} else {
			recs[i] = metrics.NewGroup(g.Name, g.Policy, g.Clients)
		}
	}
	r.recs = recs
	if r.tgt.label == "" {
		r.tgt.label = r.w.Target.URL
	}
	exp, err := r.export(at, time.Now(), false, []string{"could not start: " + cause.Error()}, true)
	if err != nil {
		return errors.Join(cause, err)
	}
	exp.Run.Shard = plan.shard
	out := fl.out
	if out == "" {
		out = results.DefaultPath(r.w.Name, at)
	}
	if err := results.WriteFile(out, exp); err != nil {
		return errors.Join(cause, fmt.Errorf("writing the export: %w", err))
	}
	written, err := results.WriteCompanions(out, exp, plan.formats)
	if err != nil {
		return errors.Join(cause, err)
	}
	fmt.Fprintf(stdout, "\nmcpchaos: %s against %s could not start\nproblem: %s\n\nexport: %s\n", r.w.Name, exp.Run.Target, exp.Run.Error, out)
	if len(written) > 0 {
		fmt.Fprintf(stdout, "        %s\n", strings.Join(written, "\n        "))
	}
	return cause
}
