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
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/results"
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
	for _, t := range fl.thresholds {
		extra = append(extra, "--threshold", t)
	}
	for _, t := range fl.abortOn {
		extra = append(extra, "--threshold-abort", t)
	}
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
	})
	kids.wait()
	stopProgress()
	return mergeShards(ctx, w, fl, out, dir, formats, n, kids.shards, stdout, stderr)
}

// mergeShards merges the exports the shards wrote, says which shards wrote none (on stdout and
// in the export's notes), and writes the merged export. An interrupted run whose shards never
// got as far as running has nothing to merge and ends as a single run would: exit 130.
func mergeShards(ctx context.Context, w *workloads.Workload, fl runFlags, out, dir string, formats []string, n int,
	shards []*shardProc, stdout, stderr io.Writer) error {
	if out == "-" {
		stdout = stderr // the export is on stdout: the summary goes beside it, not into it
	}
	var parts []results.Part
	var died, missing []string
	interrupted := ctx.Err() != nil
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
	if len(parts) == 0 {
		if interrupted {
			fmt.Fprintf(stderr, "mcpchaos: interrupted before any shard exported; nothing to merge: %s\n", strings.Join(missing, ", "))
			return errInterrupted
		}
		return fmt.Errorf("no shard wrote an export: %s", strings.Join(missing, ", "))
	}
	merged, err := results.Merge(parts, results.MergeOptions{AllowPartial: true})
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
	written, err := writeExportSet(out, merged, formats)
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

// procsChildren are the processes a --procs run started: its shards and the reference server.
type procsChildren struct {
	mu        sync.Mutex
	shards    []*shardProc
	serve     func()
	serveOnce sync.Once
}

// procsSecondSignal is the --procs run in progress, whose children a second signal ends
// (main.go) before this process exits.
var procsSecondSignal atomic.Pointer[procsChildren]

// startShards starts shard processes 0..n-1, all to begin at start; an interrupt stops it
// starting more (the ones started are signalled by the caller).
func (k *procsChildren) startShards(ctx context.Context, self, arg, dir string, n int, start time.Time, extra []string, stderr io.Writer) error {
	for i := range n {
		if ctx.Err() != nil {
			return nil
		}
		file := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		args := append([]string{"run", arg,
			"--shard", fmt.Sprintf("%d/%d", i, n),
			"--start-at", start.Format(time.RFC3339Nano),
			"--out", file, "--progress", "json", "--quiet", "--formats", "none"}, extra...)
		sp, err := startShard(self, args, i, file, stderr)
		if err != nil {
			k.signal(syscall.SIGTERM)
			k.wait()
			return fmt.Errorf("starting shard %d: %w", i, err)
		}
		k.mu.Lock()
		k.shards = append(k.shards, sp)
		k.mu.Unlock()
	}
	return nil
}

func (k *procsChildren) signal(sig os.Signal) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, s := range k.shards {
		s.signal(sig)
	}
}

// wait waits for every shard started to end and its output to be read.
func (k *procsChildren) wait() {
	k.mu.Lock()
	shards := k.shards
	k.mu.Unlock()
	for _, s := range shards {
		<-s.exited
	}
}

func (k *procsChildren) setServe(stop func()) {
	k.mu.Lock()
	k.serve = stop
	k.mu.Unlock()
}

// stopServe stops the reference server process once, whoever asks first (the run's end or a
// second signal); a later caller waits for it to be stopped.
func (k *procsChildren) stopServe() {
	k.mu.Lock()
	stop := k.serve
	k.mu.Unlock()
	if stop != nil {
		k.serveOnce.Do(stop)
	}
}

// abandon is the second signal: each shard gets it too (removing the proxies it made on an
// external toxiproxy-server and exiting at once), is killed if it has not ended within
// childGrace, and the reference server is stopped, so that this process leaves no child behind.
func (k *procsChildren) abandon() {
	k.signal(syscall.SIGINT)
	k.mu.Lock()
	shards := k.shards
	k.mu.Unlock()
	deadline := time.NewTimer(childGrace)
	defer deadline.Stop()
	for _, s := range shards {
		select {
		case <-s.exited:
		case <-deadline.C:
			deadline.Reset(0) // the others get no more time either
			s.kill()
			<-s.exited
		}
	}
	k.stopServe()
}

// shardProc is one shard process and the last status line it reported.
type shardProc struct {
	index  int
	file   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	last   []groupStatus
	exited chan struct{} // closed once the process has ended and its output was read
}

func startShard(self string, args []string, index int, file string, stderr io.Writer) (*shardProc, error) {
	s := &shardProc{index: index, file: file, cmd: exec.Command(self, args...), exited: make(chan struct{})}
	s.cmd.SysProcAttr = childAttr()
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(s.exited)
		sc := bufio.NewScanner(pipe)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if js, ok := strings.CutPrefix(line, statusPrefix); ok {
				var gs []groupStatus
				if json.Unmarshal([]byte(js), &gs) == nil {
					s.mu.Lock()
					s.last = gs
					s.mu.Unlock()
				}
				continue
			}
			fmt.Fprintf(stderr, "shard %d: %s\n", index, line)
		}
		_, _ = io.Copy(io.Discard, pipe) // a line over the buffer: read to the end all the same
		_ = s.cmd.Wait()
	}()
	return s, nil
}

func (s *shardProc) signal(sig os.Signal) {
	if s != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(sig) // a process this one started, by its PID
	}
}

func (s *shardProc) kill() { s.signal(syscall.SIGKILL) }

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
