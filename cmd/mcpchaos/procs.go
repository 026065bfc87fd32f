package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/merge"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// procsLead is how long shard processes get to start and set up their proxies before the
// common start time.
const procsLead = 3 * time.Second

// childGrace is how long a child process gets to end after a signal before it is killed.
const childGrace = 5 * time.Second

// runProcs runs the workload as n shard processes on this machine (--procs n): one process can
// hold only so many sessions (20,000 descriptors, 3 per proxied session), and n processes share
// the machine's cores. With the built-in target, one reference server serves every shard from
// a process of its own, so the shards' clients meet one server as a fleet would. Each shard
// has its own embedded Toxiproxy, so faults never collide. The parent shows one combined
// progress view, reports a shard that dies, and merges the shards' exports exactly at the end,
// keeping the others' results.
//
// Signals behave as for a single run. The children run in process groups of their own, so a
// terminal's Ctrl-C (sent to the whole foreground group) reaches only this process, which
// passes each signal on once, by PID: the first drains every shard and merges what they
// exported; the second makes the shards remove their external proxies and exit, and stops the
// reference server, before this process exits (see procsChildren.abandon).
func runProcs(ctx context.Context, arg string, w *workloads.Workload, fl runFlags, n int, stdout, stderr io.Writer) error {
	if f := w.TopologyAction(); f != nil { // the shards would each meet the one server process by URL
		return usagef("--procs: %s: %s acts on the reference server run by the process of the run; run this workload without --procs", f.Where, f.Action.Kind)
	}
	if err := engine.CheckDescriptors(w, n); err != nil { // each process's part, on this machine
		return err
	}
	formats, err := parseFormats(fl.formats)
	if err != nil {
		return err
	}
	self, err := selfPath()
	if err != nil {
		return err
	}
	start := time.Now().Add(procsLead)
	out := fl.out
	if out == "" {
		out = results.DefaultPath(w.Name, start)
	}
	shardsOut := out
	if out == "-" {
		shardsOut = results.DefaultPath(w.Name, start)
	}
	dir := strings.TrimSuffix(shardsOut, filepath.Ext(shardsOut)) + ".shards"
	if err := checkOutputs("--out", out, formats); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	kids := &procsChildren{}
	procsSecondSignal.Store(kids)
	defer procsSecondSignal.Store(nil)
	defer kids.stopServe()

	var extra []string
	if w.Target.Builtin != nil && fl.target.url == "" {
		url, stop, err := startServeProcess(self, arg, stderr)
		if err != nil {
			return err
		}
		kids.setServe(stop)
		extra = append(extra, "--target", url)
	}
	if ctx.Err() != nil {
		return errInterrupted // interrupted while setting up: nothing ran, nothing to export
	}
	extra = append(extra, fl.target.args()...)
	extra = append(extra, fl.groups.args()...)
	for _, t := range fl.thresholds {
		extra = append(extra, "--threshold", t)
	}
	for _, t := range fl.abortOn {
		extra = append(extra, "--threshold-abort", t)
	}
	for _, l := range fl.labels {
		extra = append(extra, "--label", l)
	}
	extra = append(extra, fl.push.args()...)
	if err := kids.startShards(ctx, self, arg, dir, n, start, extra, stderr); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "mcpchaos: %s: %d shard processes setting up; starting at %s\n", w.Name, n, start.UTC().Format(time.RFC3339Nano))
	// A signal this process gets is passed on, once, to every shard it started.
	stopForward := context.AfterFunc(ctx, func() { kids.signal(syscall.SIGINT) })
	defer stopForward()

	names := make([]string, len(w.Groups))
	for i, g := range w.Groups {
		names[i] = g.Name
	}
	stopProgress := startProgress(fl.progress, stderr, start, w.Duration, func() []groupStatus {
		return sumStatus(names, kids.shards)
	}, func(_, _ time.Time) (string, []string) { return shardsRun(kids.shards) }, nil)
	kids.wait()
	stopProgress()
	return mergeShards(ctx, w, fl, out, dir, formats, n, kids.shards, stdout, stderr)
}

// collectShards reads the exports the shards wrote; died are the shards that failed, missing
// those that wrote no export (or never started), each with why.
func collectShards(shards []*shardProc, n int, interrupted bool) (parts []results.Part, died, missing []string, _ bool) {
	for i := range n {
		if i >= len(shards) {
			missing = append(missing, fmt.Sprintf("shard %d (never started: interrupted)", i))
			continue
		}
		s := shards[i]
		code := s.cmd.ProcessState.ExitCode()
		switch {
		case code == exitInterrupted:
			interrupted = true
		case code != exitOK && code != exitThresholds:
			died = append(died, fmt.Sprintf("shard %d (%s)", s.index, s.cmd.ProcessState))
		}
		e, err := results.ReadFile(s.file)
		if err != nil {
			why := err.Error()
			if errors.Is(err, os.ErrNotExist) {
				why = "it wrote none: " + s.cmd.ProcessState.String()
			}
			missing = append(missing, fmt.Sprintf("shard %d (%s)", s.index, why))
			continue
		}
		parts = append(parts, results.Part{File: s.file, Export: e})
	}
	return parts, died, missing, interrupted
}

// mergeShards merges the exports the shards wrote, says which shards wrote none (on stdout and
// in the export's notes), and writes the merged export. An interrupted run whose shards never
// got as far as running has nothing to merge and ends as a single run would: exit 130.
func mergeShards(ctx context.Context, w *workloads.Workload, fl runFlags, out, dir string, formats []string, n int,
	shards []*shardProc, stdout, stderr io.Writer) error {
	if out == "-" {
		stdout = stderr // the export is on stdout: the summary goes beside it, not into it
	}
	parts, died, missing, interrupted := collectShards(shards, n, ctx.Err() != nil)
	if len(parts) == 0 {
		if interrupted {
			fmt.Fprintf(stderr, "mcpchaos: interrupted before any shard exported; nothing to merge: %s\n", strings.Join(missing, ", "))
			return errInterrupted
		}
		return fmt.Errorf("no shard wrote an export: %s", strings.Join(missing, ", "))
	}
	merged, err := merge.Merge(parts, merge.Options{AllowPartial: true})
	if err != nil {
		return fmt.Errorf("merging the shards: %w", err)
	}
	if interrupted {
		merged.Run.Interrupted = true
	}
	var problems []string
	if len(missing) > 0 {
		p := fmt.Sprintf("not in this merge, %d of %d shards: %s", len(missing), n, strings.Join(missing, ", "))
		merged.Run.Notes = append(merged.Run.Notes, p)
		problems = append(problems, p)
	}
	// The summary first: a full disk found when writing the export must not lose it.
	if !fl.quiet {
		fmt.Fprintf(stdout, "\nmcpchaos: %s in %d processes against %s\n\n", w.Name, n, merged.Run.Target)
		if err := results.WriteSummary(stdout, merged); err != nil {
			return err
		}
		if err := printThresholds(stdout, merged.Thresholds, ""); err != nil {
			return err
		}
	}
	for _, p := range problems {
		fmt.Fprintf(stdout, "problem: %s\n", p)
	}
	written, err := writeExportSet(ctx, out, merged, formats)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nexport: %s (shards in %s)\n", out, dir)
	if len(written) > 0 {
		fmt.Fprintf(stdout, "        %s\n", strings.Join(written, "\n        "))
	}
	switch {
	case interrupted:
		return errInterrupted
	case len(died)+len(missing) > 0:
		return fmt.Errorf("%s failed; the export merges the %d shards that finished", strings.Join(append(died, missing...), ", "), len(parts))
	}
	return verdictError(merged)
}

// shardsRun is the phase the shards report (the first that reports one) and every fault in
// force in any of them.
func shardsRun(shards []*shardProc) (phase string, fs []string) {
	for _, s := range shards {
		s.mu.Lock()
		if phase == "" {
			phase = s.run.Phase
		}
		for _, f := range s.run.Faults {
			if !slices.Contains(fs, f) {
				fs = append(fs, f)
			}
		}
		s.mu.Unlock()
	}
	return phase, fs
}

// sumStatus adds up the shards' last status lines, group by group.
func sumStatus(names []string, shards []*shardProc) []groupStatus {
	out := make([]groupStatus, len(names))
	index := make(map[string]int, len(names))
	for i, n := range names {
		out[i].Name = n
		index[n] = i
	}
	for _, s := range shards {
		s.mu.Lock()
		for _, g := range s.last {
			if i, ok := index[g.Name]; ok {
				out[i].add(g)
			}
		}
		s.mu.Unlock()
	}
	return out
}

// startServeProcess starts `mcpchaos serve --from WORKLOAD` on a loopback port and returns its
// URL and a function that stops it (by its PID): SIGTERM, then SIGKILL after childGrace.
func startServeProcess(self, arg string, stderr io.Writer) (string, func(), error) {
	srv := exec.Command(self, "serve", "--from", arg, "--addr", "127.0.0.1:0")
	srv.Stderr = stderr
	srv.SysProcAttr = childAttr()
	out, err := srv.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := srv.Start(); err != nil {
		return "", nil, fmt.Errorf("starting the reference server: %w", err)
	}
	stop := func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(childGrace):
			_ = srv.Process.Kill()
			<-done
		}
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	fields := strings.Fields(line)
	if err != nil || len(fields) < 5 || !strings.HasPrefix(fields[4], "http://") {
		stop()
		return "", nil, errors.Join(errors.New("the reference server did not say where it listens"), err)
	}
	return fields[4], stop, nil
}

// selfPath is the command to start more mcpchaos processes with: the program as it was invoked
// (so that a renamed or wrapped binary starts copies of itself), else the running executable.
func selfPath() (string, error) {
	if p, err := exec.LookPath(os.Args[0]); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs, nil
		}
	}
	return os.Executable()
}
