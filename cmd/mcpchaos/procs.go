package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// procsLead is how long shard processes get to start and set up their proxies before the
// common start time.
const procsLead = 3 * time.Second

// runProcs runs the workload as n shard processes on this machine (--procs n): one process can
// hold only so many sessions (20,000 descriptors, 3 per proxied session), and n processes share
// the machine's cores. With the built-in target, one reference server serves every shard from
// a process of its own, so the shards' clients meet one server as a fleet would. Each shard
// has its own embedded Toxiproxy, so faults never collide. The parent shows one combined
// progress view, reports a shard that dies, and merges the shards' exports exactly at the end,
// keeping the others' results.
func runProcs(ctx context.Context, arg string, w *workloads.Workload, fl runFlags, n int, stdout, stderr io.Writer) error {
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
	dir := strings.TrimSuffix(out, filepath.Ext(out)) + ".shards"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}

	extra, stopServe, err := shardFlags(ctx, self, arg, w, fl, stderr)
	if err != nil {
		return err
	}
	defer stopServe()
	shards, err := startShards(self, arg, dir, n, start, extra, stderr)
	if err != nil {
		return err
	}
	// Ctrl-C reaches the children from the terminal; a signal sent to this process alone is
	// passed on, by PID, to the children it started.
	stopForward := context.AfterFunc(ctx, func() {
		for _, s := range shards {
			s.signal(syscall.SIGINT)
		}
	})
	defer stopForward()

	names := make([]string, len(w.Groups))
	for i, g := range w.Groups {
		names[i] = g.Name
	}
	stopProgress := startProgress(fl.progress, stderr, start, w.Duration, func() []groupStatus {
		return sumStatus(names, shards)
	}, func(time.Time) (string, []string) { return shardsRun(shards) })
	var wg sync.WaitGroup
	for _, s := range shards {
		wg.Go(s.wait)
	}
	wg.Wait()
	stopProgress()

	parts, died, interrupted := collectShards(shards, ctx.Err() != nil)
	if len(parts) == 0 {
		return fmt.Errorf("no shard wrote an export; failed: %s", strings.Join(died, ", "))
	}
	merged, err := results.Merge(parts, results.MergeOptions{AllowPartial: true})
	if err != nil {
		return fmt.Errorf("merging the shards: %w", err)
	}
	if interrupted {
		merged.Run.Interrupted = true
	}
	if err := writeMerged(stdout, out, dir, merged, formats, fl.quiet, fmt.Sprintf("%s in %d processes", w.Name, n)); err != nil {
		return err
	}
	switch {
	case interrupted:
		return errInterrupted
	case len(died) > 0:
		return fmt.Errorf("%s failed; the export merges the %d shards that finished", strings.Join(died, ", "), len(parts))
	}
	return verdictError(merged)
}

// shardFlags are the flags every shard process gets beside its own: the run's target and
// thresholds flags, and with the built-in target the URL of one reference server in a process
// of its own (stopped by the returned function) that every shard's clients meet.
func shardFlags(ctx context.Context, self, arg string, w *workloads.Workload, fl runFlags, stderr io.Writer) ([]string, func(), error) {
	var extra []string
	stop := func() {}
	if w.Target.Builtin != nil && fl.target.url == "" {
		url, stopServe, err := startServeProcess(ctx, self, arg, stderr)
		if err != nil {
			return nil, nil, err
		}
		stop = stopServe
		extra = append(extra, "--target", url)
	}
	extra = append(extra, fl.target.args()...)
	for _, t := range fl.thresholds {
		extra = append(extra, "--threshold", t)
	}
	for _, t := range fl.abortOn {
		extra = append(extra, "--threshold-abort", t)
	}
	for _, l := range fl.labels {
		extra = append(extra, "--label", l)
	}
	return extra, stop, nil
}

// startShards starts n shard processes of `run arg`, each with extra arguments, all starting
// their clients at start; if one cannot start, those started are stopped.
func startShards(self, arg, dir string, n int, start time.Time, extra []string, stderr io.Writer) ([]*shardProc, error) {
	shards := make([]*shardProc, n)
	for i := range shards {
		file := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		args := append([]string{"run", arg,
			"--shard", fmt.Sprintf("%d/%d", i, n),
			"--start-at", start.Format(time.RFC3339Nano),
			"--out", file, "--progress", "json", "--quiet", "--formats", "none"}, extra...)
		sp, err := startShard(self, args, i, file, stderr)
		if err != nil {
			for _, s := range shards[:i] {
				s.signal(syscall.SIGTERM)
				s.wait()
			}
			return nil, fmt.Errorf("starting shard %d: %w", i, err)
		}
		shards[i] = sp
	}
	return shards, nil
}

// collectShards reads the exports of the shards that ended, and says which died and whether
// one was interrupted.
func collectShards(shards []*shardProc, interrupted bool) (parts []results.Part, died []string, _ bool) {
	for _, s := range shards {
		code := s.cmd.ProcessState.ExitCode()
		switch {
		case code == exitInterrupted:
			interrupted = true
		case code != exitOK && code != exitThresholds:
			died = append(died, fmt.Sprintf("shard %d (%s)", s.index, s.cmd.ProcessState))
		}
		e, err := results.ReadFile(s.file)
		if err != nil {
			if code == exitOK {
				died = append(died, fmt.Sprintf("shard %d (no export: %v)", s.index, err))
			}
			continue
		}
		parts = append(parts, results.Part{File: s.file, Export: e})
	}
	return parts, died, interrupted
}

// writeMerged writes the merged export and its companions and prints its summary.
func writeMerged(stdout io.Writer, out, dir string, merged *results.Export, formats []string, quiet bool, what string) error {
	if err := results.WriteFile(out, merged); err != nil {
		return fmt.Errorf("writing the export: %w", err)
	}
	if _, err := results.WriteCompanions(out, merged, formats); err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(stdout, "\nmcpchaos: %s against %s\n\n", what, merged.Run.Target)
		if err := results.WriteSummary(stdout, merged); err != nil {
			return err
		}
		if err := printThresholds(stdout, merged.Thresholds, ""); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "\nexport: %s (shards in %s)\n", out, dir)
	return nil
}

// shardProc is one shard process and the last status line it reported.
type shardProc struct {
	index int
	file  string
	cmd   *exec.Cmd
	mu    sync.Mutex
	last  []groupStatus
	run   statusLine // the last status line's phase and faults
	read  sync.WaitGroup
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

func startShard(self string, args []string, index int, file string, stderr io.Writer) (*shardProc, error) {
	s := &shardProc{index: index, file: file, cmd: exec.Command(self, args...)}
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	s.read.Go(func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if js, ok := strings.CutPrefix(line, statusPrefix); ok {
				var st statusLine
				if json.Unmarshal([]byte(js), &st) == nil {
					gs := st.Groups
					s.mu.Lock()
					s.last = gs
					s.run = statusLine{Phase: st.Phase, Faults: st.Faults}
					s.mu.Unlock()
				}
				continue
			}
			fmt.Fprintf(stderr, "shard %d: %s\n", index, line)
		}
	})
	return s, nil
}

// wait waits for the process and for its output to be read.
func (s *shardProc) wait() {
	s.read.Wait()
	_ = s.cmd.Wait()
}

func (s *shardProc) signal(sig os.Signal) {
	if s != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(sig) // a process this one started, by its PID
	}
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
// URL and a function that stops it (by its PID).
func startServeProcess(ctx context.Context, self, arg string, stderr io.Writer) (string, func(), error) {
	srv := exec.Command(self, "serve", "--from", arg, "--addr", "127.0.0.1:0")
	srv.Stderr = stderr
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
		case <-time.After(5 * time.Second):
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
	_ = ctx
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
