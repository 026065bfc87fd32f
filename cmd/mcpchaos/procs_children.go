package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The processes a --procs run starts, and how signals reach them (see runProcs).

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
		// An earlier run's shard export under this name would be merged as this run's, if
		// this shard wrote none: it goes first (only a regular file, as outfile would replace).
		if fi, err := os.Lstat(file); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(file); err != nil {
				k.signal(syscall.SIGTERM)
				k.wait()
				return fmt.Errorf("removing the earlier run's %s: %w", file, err)
			}
		}
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
	run    statusLine    // the last status line's phase and faults
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
			if st, ok := parseStatus(line); ok {
				s.mu.Lock()
				s.last, s.run = st.Groups, statusLine{Phase: st.Phase, Faults: st.Faults}
				s.mu.Unlock()
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
