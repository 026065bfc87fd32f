package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/live"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/shards"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// procsSecondSignal is the --procs run in progress, whose children a second signal ends
// (main.go) before this process exits.
var procsSecondSignal atomic.Pointer[shards.Supervisor]

// runProcs runs the workload as n shard processes on this machine (--procs n; package shards
// starts and supervises them). This command checks the plan, builds the shards' flags, shows
// the one progress view and prints and writes the merged result.
//
// Signals behave as for a single run. The children run in process groups of their own, so a
// terminal's Ctrl-C (sent to the whole foreground group) reaches only this process, which
// passes each signal on once, by PID: the first drains every shard and merges what they
// exported; the second makes the shards remove their external proxies and exit, and stops the
// reference server, before this process exits (shards.Supervisor.Abandon).
func runProcs(ctx context.Context, arg string, w *workloads.Workload, fl runFlags, flags *pflag.FlagSet, n int, stdout, stderr io.Writer) error {
	serve := w.Target.Builtin != nil && fl.target.url == ""
	warnings, err := shards.Check(w, n, serve)
	if err != nil {
		return err
	}
	for _, warn := range warnings {
		fmt.Fprintf(stderr, "warning: %s\n", warn)
	}
	formats, err := parseFormats(fl.formats)
	if err != nil {
		return err
	}
	self, err := shards.Self()
	if err != nil {
		return err
	}
	start := time.Now().Add(shards.Lead)
	out, dir := shards.Layout(fl.out, w.Name, start)
	if err := checkOutputs("--out", out, formats); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sup := shards.New(shards.Config{
		Binary: self, Workload: arg, Count: n, Dir: dir, Start: start, Serve: serve, Args: shards.FlagArgs(flags), Log: stderr,
	}.For(w))
	procsSecondSignal.Store(sup)
	defer procsSecondSignal.Store(nil)
	defer sup.Close()
	if err := sup.Start(ctx); err != nil {
		if errors.Is(err, shards.ErrInterrupted) {
			return errInterrupted // interrupted while setting up: nothing ran, nothing to export
		}
		return err
	}
	fmt.Fprintf(stderr, "mcpchaos: %s: %d shard processes setting up; starting at %s\n", w.Name, n, start.UTC().Format(time.RFC3339Nano))

	names := make([]string, len(w.Groups))
	for i, g := range w.Groups {
		names[i] = g.Name
	}
	stopProgress := live.StartProgress(fl.progress, stderr, start, w.Duration, func() []shards.GroupStatus {
		return sup.Status(names)
	}, func(_, _ time.Time) (string, []string) { return sup.Phase() }, nil)
	sup.Wait()
	stopProgress()
	return mergeShards(ctx, sup, w, fl, out, dir, formats, n, stdout, stderr)
}

// autoProcs is --procs 0 (the default): one process, unless a process's descriptors cannot
// hold the workload's sessions, then the fewest processes that can (shards.Fewest), said on
// stderr. A run that shards itself otherwise (--shard, --start-at, --hlog) stays one process,
// and the descriptor check refuses it with its advice if it does not fit.
func autoProcs(w *workloads.Workload, fl *runFlags, stderr io.Writer) int {
	if fl.shard != "" || fl.startAt != "" || fl.hlog.on() {
		return 1
	}
	n := shards.Fewest(w)
	if n <= 1 || n > shards.MaxProcs {
		return 1
	}
	fmt.Fprintf(stderr, "mcpchaos: %d clients do not fit one process's file descriptors (ulimit -n): running them as --procs %d, the fewest that fit\n", w.Clients(), n)
	return n
}

// mergeShards merges the exports the shards wrote, says which shards wrote none (on stdout and
// in the export's notes), and writes the merged export. An interrupted run whose shards never
// got as far as running has nothing to merge and ends as a single run would: exit 130.
func mergeShards(ctx context.Context, sup *shards.Supervisor, w *workloads.Workload, fl runFlags, out, dir string, formats []string, n int,
	stdout, stderr io.Writer) error {
	if out == "-" {
		stdout = stderr // the export is on stdout: the summary goes beside it, not into it
	}
	res, err := sup.Collect(ctx.Err() != nil)
	if err != nil {
		return err
	}
	merged := res.Export
	if merged == nil { // interrupted before any shard exported
		fmt.Fprintf(stderr, "mcpchaos: interrupted before any shard exported; nothing to merge: %s\n", strings.Join(res.Missing, ", "))
		return errInterrupted
	}
	// The summary first: a full disk found when writing the export must not lose it.
	if !fl.quiet {
		fmt.Fprintf(stdout, "\nmcpchaos: %s in %d processes against %s\n\n", w.Name, n, merged.Run.Target)
		results.WriteIncomplete(stdout, merged)
		if err := results.WriteSummary(stdout, merged); err != nil {
			return err
		}
		if err := results.WriteThresholdTable(stdout, merged.Thresholds, ""); err != nil {
			return err
		}
	}
	for _, p := range res.Problems(n) {
		fmt.Fprintf(stdout, "problem: %s\n", p)
	}
	written, err := results.WriteExportSet(ctx, out, merged, formats)
	if err != nil {
		return err
	}
	printExport(stdout, out+" (shards in "+dir+")", written)
	return res.Outcome()
}
