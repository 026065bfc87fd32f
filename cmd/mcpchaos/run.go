package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/live"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/shards"
	"github.com/mcpchaos/mcpchaos/workloads"
)

type runFlags struct {
	out      string
	progress string // auto, bars, lines, off
	quiet    bool
	target   targetFlags // --target, --toxiproxy and the target's connection settings (setup.go)
	groups   groupFlags  // --tool, --tool-args, --probe, --dead-statuses, --from-inspect (runoverrides.go)

	formats       string   // companions of the JSON export: csv, hgrm, junit, or none
	thresholds    []string // --threshold: judged at the end, beside the workload's
	abortOn       []string // --threshold-abort: stop the run as soon as one fails for good
	shard         string   // --shard INDEX/COUNT
	startAt       string   // --start-at RFC 3339 time
	metricsAddr   string   // --metrics-addr HOST:PORT: live Prometheus metrics
	metricsPublic bool
	labels        []string // --label key=value, repeatable
	metricsLinger time.Duration
	procs         int       // --procs N: run as N local shard processes (procs.go)
	push          pushFlags // --remote-write (remotewrite.go)
	hlog          hlogFlags // --hlog, --hlog-dir (hlog.go)
}

func newRunCmd() *cobra.Command { return runCommand(&runFlags{}) }

// runCommand is the run command with its flags parsed into fl (the docs test reads them).
func runCommand(fl *runFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run WORKLOAD",
		Short: "Run a workload: a fleet of sessions, faults, TTLs running out; export the numbers",
		Long: `Run a workload. WORKLOAD is a file path or the name of a built-in workload
(` + strings.Join(workloads.BuiltinNames(), ", ") + `).

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
			w, err := workloads.Resolve(a[0])
			if err != nil {
				return err
			}
			if fl.procs == 0 { // the default: as many processes as this machine needs (procs.go)
				fl.procs = 1
				if _, err := fl.plan(w); err != nil {
					return err // planned as validate plans it (one process): the same limits, the same words
				}
				fl.procs = autoProcs(w, fl, cmd.ErrOrStderr())
			}
			plan, err := fl.plan(w)
			if err != nil {
				return err
			}
			if fl.procs > 1 {
				return runProcs(cmd.Context(), a[0], plan.Workload(), *fl, cmd.Flags(), fl.procs, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			return run(cmd.Context(), plan, *fl, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&fl.out, "out", "o", "", "where to write the JSON export (default ./mcpchaos-results/<workload>-<time>.json; - for stdout)")
	f.StringVar(&fl.progress, "progress", "auto", "live progress: auto (bars on a terminal, lines elsewhere), bars, lines, json (a status line a second, for a parent process), off")
	f.BoolVarP(&fl.quiet, "quiet", "q", false, "print no summary table")
	f.StringVar(&fl.formats, "formats", strings.Join(results.Formats, ","), "companions written beside the JSON export: csv, hgrm, junit (comma-separated), or none")
	f.StringArrayVar(&fl.thresholds, "threshold", nil, "a threshold judged at the end, e.g. 'probe.misattributed_errors == 0' (repeatable; adds to the workload's)")
	f.StringArrayVar(&fl.abortOn, "threshold-abort", nil, "a threshold that stops the run as soon as it fails for good, e.g. 'overall.misattributed_errors < 10' (repeatable)")
	f.StringArrayVar(&fl.labels, "label", nil, "what the run tests, key=value, e.g. release=v1.4.2 or commit=3f2a1c9 (repeatable): in the export, compare and the report")
	f.DurationVar(&fl.metricsLinger, "metrics-linger", 15*time.Second, "after the run, keep serving the final metrics until one scrape has read them or this long (0: stop at once)")
	f.IntVar(&fl.procs, "procs", 0, "run as this many shard processes on this machine, one progress view, exports merged (0: the fewest whose sessions fit a process's descriptors, 1 for most workloads)")
	f.StringVar(&fl.shard, "shard", "", "run one shard of the fleet: INDEX/COUNT, INDEX from 0 (e.g. 0/4 ... 3/4)")
	f.StringVar(&fl.startAt, "start-at", "", "start the clients at this RFC 3339 time (align shards), e.g. 2026-01-02T15:04:05Z")
	f.StringVar(&fl.metricsAddr, "metrics-addr", "", "serve live counters and histograms in Prometheus format at http://HOST:PORT/metrics")
	f.BoolVar(&fl.metricsPublic, "metrics-public", false, "allow a non-loopback --metrics-addr")
	fl.target.register(f)
	fl.groups.register(f)
	fl.push.register(f)
	fl.hlog.register(f)
	return cmd
}

// plan turns the workload and the run's flags into the engine's plan: every flag is checked
// here (usage errors, exit 2), and applied once, by engine.NewPlan.
func (fl *runFlags) plan(w *workloads.Workload) (*engine.Plan, error) {
	switch fl.progress {
	case "auto", "bars", "lines", "off", "json":
	default:
		return nil, usagef("--progress %q: want auto, bars, lines, json or off", fl.progress)
	}
	if fl.procs < 0 || fl.procs > shards.MaxProcs {
		return nil, usagef("--procs %d: want 1 to %d processes, or 0 to let the machine's limits choose", fl.procs, shards.MaxProcs)
	}
	if fl.procs > 1 && (fl.shard != "" || fl.startAt != "") {
		return nil, usagef("--procs shards the run itself; leave out --shard and --start-at")
	}
	gopts, ttlMode, err := fl.groups.options()
	if err != nil {
		return nil, err
	}
	fl.target.inspectedTTLMode = ttlMode
	opts, err := fl.target.options(w)
	if err != nil {
		return nil, err
	}
	opts = append(opts, gopts...)
	if fl.shard != "" {
		s, err := parseShard(fl.shard)
		if err != nil {
			return nil, err
		}
		opts = append(opts, engine.WithShard(s.Index, s.Count))
	}
	if fl.procs > 1 {
		opts = append(opts, engine.WithProcs(fl.procs))
	}
	if fl.startAt != "" {
		at, err := parseStartAt(fl.startAt, time.Now(), fl.shard != "")
		if err != nil {
			return nil, err
		}
		opts = append(opts, engine.WithStartAt(at))
	}
	if _, err := parseFormats(fl.formats); err != nil {
		return nil, err
	}
	ths, err := flagThresholds(fl.thresholds, "--threshold")
	if err != nil {
		return nil, err
	}
	abort, err := flagThresholds(fl.abortOn, "--threshold-abort")
	if err != nil {
		return nil, err
	}
	for i := range abort {
		abort[i].AbortOnFail = true
	}
	opts = append(opts, engine.WithThresholds(append(ths, abort...)...))
	labels, err := parseLabels(fl.labels)
	if err != nil {
		return nil, err
	}
	opts = append(opts, engine.WithLabels(labels))
	if err := fl.push.check(labels); err != nil {
		return nil, err
	}
	if fl.metricsAddr != "" {
		if err := checkMetricsAddr(fl.metricsAddr, fl.metricsPublic); err != nil {
			return nil, err
		}
	}
	plan, err := engine.NewPlan(w, opts...)
	var se *engine.ShardError
	if errors.As(err, &se) {
		return nil, usagef("--shard %q: %s", fl.shard, se.Why)
	}
	if err != nil {
		return nil, flagError(err, thresholdFlag(len(ths)))
	}
	return plan, nil
}

// thresholdFlag names the flag that gave the added threshold at a field of NewPlan's error:
// the --threshold ones come first (n of them), then the --threshold-abort ones.
func thresholdFlag(n int) func(field string) string {
	return func(field string) string {
		var i int
		if _, err := fmt.Sscanf(field, "thresholds (added)[%d]", &i); err != nil {
			return ""
		}
		if i < n {
			return "--threshold"
		}
		return "--threshold-abort"
	}
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

// run carries out one run in this process: the engine runs it, with progress and live metrics
// as observers; run writes the export and its companions, prints the summary, and returns
// the error that decides the exit status.
func run(ctx context.Context, plan *engine.Plan, fl runFlags, stdout, stderr io.Writer) error {
	formats, _ := parseFormats(fl.formats) // checked by fl.plan
	w := plan.Workload()
	if err := checkOutputs("--out", outPath(fl.out, w.Name), formats); err != nil {
		return err
	}
	if err := fl.hlog.check(outPath(fl.out, w.Name), fl.procs); err != nil {
		return err
	}
	if fl.out == "-" {
		stdout = stderr // the export is on stdout: the summary goes beside it
	}
	opts := []engine.Option{
		engine.WithToolVersion(version), engine.WithStderr(stderr), engine.WithAbandoner(abandonerOf(ctx)),
		engine.WithObserver(&live.Progress{Mode: fl.progress, Out: stderr}),
		engine.WithReady(func(start time.Time) {
			if !plan.StartAt().IsZero() {
				fmt.Fprintf(stderr, "mcpchaos: %s%s ready; starting at %s (in %s)\n", w.Name, describeShard(plan.Shard()),
					start.UTC().Format(time.RFC3339Nano), time.Until(start).Round(time.Second))
			}
		}),
	}
	var problems []string
	opts = append(opts, engine.WithProblems(func(p []string) { problems = p }))
	var mo *live.Metrics
	if fl.metricsAddr != "" {
		mo = &live.Metrics{Addr: fl.metricsAddr, Stderr: stderr}
		opts = append(opts, engine.WithObserver(mo))
	}
	var ro *live.RemoteWrite
	if fl.push.url != "" {
		ro = &live.RemoteWrite{URL: fl.push.url, Interval: fl.push.interval, Public: fl.push.public, Version: version, Stderr: stderr}
		opts = append(opts, engine.WithObserver(ro))
	}
	var ho *live.HistLogs
	if fl.hlog.on() {
		ho = &live.HistLogs{Parent: filepath.Dir(fl.hlog.hlogDir(outPath(fl.out, w.Name))), Stderr: stderr}
		opts = append(opts, engine.WithObserver(ho))
		defer ho.Cleanup() // a run that ends before its export: no logs left behind
	}
	exp, runErr := engine.Run(ctx, plan, opts...)
	// The final values are counted by now (calls run twice, from the server): push them.
	ro.Flush()
	defer mo.Linger(ctx, fl.metricsLinger, stderr) // after the export is written and the summary printed
	if exp == nil {
		return runErr
	}
	out := fl.out
	if out == "" {
		out = results.DefaultPath(w.Name, exp.Run.Start)
	}
	// The summary first: a full disk found when writing the export must not lose it.
	var se *engine.SetupError
	var nse *engine.NotSteadyError
	if errors.As(runErr, &se) || errors.As(runErr, &nse) {
		verb := "could not start"
		if nse != nil {
			verb = "did not start: the system was not steady"
		}
		fmt.Fprintf(stdout, "\nmcpchaos: %s against %s %s\nproblem: %s\n", w.Name, exp.Run.Target, verb, exp.Run.Error)
		results.WriteSteady(stdout, exp)
	} else if err := printRun(stdout, fl, plan, exp, problems); err != nil {
		return err
	}
	written, err := results.WriteExportSet(ctx, out, exp, formats)
	if err != nil {
		return errors.Join(engine.SetupCause(runErr), err)
	}
	if dir, err := ho.Finish(fl.hlog.hlogDir(out)); err != nil {
		return errors.Join(engine.SetupCause(runErr), err)
	} else if dir != "" {
		written = append(written, dir)
	}
	printExport(stdout, out, written)
	return engine.Outcome(runErr, plan, exp)
}

// printRun prints a finished run's summary, its problems and its thresholds.
func printRun(stdout io.Writer, fl runFlags, plan *engine.Plan, exp *results.Export, problems []string) error {
	if !fl.quiet {
		if err := results.WriteRun(stdout, exp, describeShard(plan.Shard()), problems); err != nil {
			return err
		}
	}
	note := ""
	if plan.Shard() != nil {
		note = "(a shard's thresholds are judged on the merged result: mcpchaos merge)"
	}
	if l := exp.Run.SessionLeak; l != nil { // engine/leakcheck.go
		fmt.Fprintf(stdout, "\nsession-leak check: %s\n", l.Verdict)
	}
	return results.WriteThresholdTable(stdout, exp.Thresholds, note)
}
