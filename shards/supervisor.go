// Package shards runs a workload as shard processes on one machine (`mcpchaos run --procs N`)
// and supervises them: one process can hold only so many sessions (its descriptors), and N
// processes share the machine's cores. With the built-in target one reference server serves
// every shard from a process of its own, so the shards' clients meet one server as a fleet
// would; each shard has its own embedded Toxiproxy, so faults never collide. The Supervisor
// sums the shards' status lines for one progress view, passes signals on once by PID, and at
// the end collects and merges the shards' exports exactly, keeping the results of the shards
// that finished when one dies.
//
// The processes are copies of the mcpchaos binary (Config.Binary, Self) running `run --shard
// i/n` with the run's own flags (FlagArgs), after Check has found the plan fits this machine;
// the caller prints and writes the merged export, and Result.Outcome says how the run ended.
package shards

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
	"sync"
	"syscall"
	"time"
)

// Lead is how long shard processes get to start and set up their proxies before the common
// start time.
const Lead = 3 * time.Second

// childGrace is how long a child process gets to end after a signal before it is killed.
const childGrace = 5 * time.Second

// ErrInterrupted is Start's error when the context ended while setting up, before any shard
// was started: nothing ran, nothing will be exported.
var ErrInterrupted = errors.New("interrupted while setting up the shard processes")

// Config is what a Supervisor starts.
type Config struct {
	Binary   string    // the mcpchaos executable the shards and the reference server run
	Workload string    // the workload argument as given to run: a file path or a built-in name
	Count    int       // how many shard processes
	Dir      string    // where each shard writes its export, shard-I.json
	Start    time.Time // when every shard's clients start (leave Lead for set-up)
	// Serve starts one reference server process (`mcpchaos serve --from WORKLOAD`) and points
	// every shard at it: the built-in target shared as a fleet would meet it.
	Serve bool
	// Servers is how many reference server processes Serve starts (0: one), each with the
	// workload's server: shard i is pointed at server i mod Servers. A session lives in one
	// shard, so it meets one server all its life; several are for the server's descriptors
	// (ServersFor).
	Servers int
	// ServeMaxSessions is that server's session cap: the workload's max_sessions, 0 for none,
	// as the in-process built-in target has. Passed as --max-sessions because a standalone
	// serve otherwise caps at its own default (10,000), which a 19,000-session run outgrows.
	ServeMaxSessions int
	Args             []string  // more `run` flags for every shard (target, groups, thresholds, labels)
	Log              io.Writer // the children's stderr lines other than status lines, prefixed "shard I: "
}

// Supervisor is the processes of one sharded run: its shards and the reference server.
type Supervisor struct {
	cfg       Config
	mu        sync.Mutex
	shards    []*proc
	serve     []func() // stops each reference server process started
	serveOnce sync.Once
	unforward func() bool
}

// New is a Supervisor for cfg that has started nothing yet: a caller may hand it to its
// second-signal handler (Abandon) before Start.
func New(cfg Config) *Supervisor {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	return &Supervisor{cfg: cfg}
}

// Start starts the reference server process (Config.Serve) and the shard processes 0..n-1.
// The context's end is passed on once to every shard started, as SIGINT, by PID: they drain
// and export. An interrupt while starting stops it starting more; ErrInterrupted when it came
// before any shard. Close must be called in every case.
func (s *Supervisor) Start(ctx context.Context) error {
	var targets []string
	if s.cfg.Serve {
		for range max(s.cfg.Servers, 1) {
			url, stop, err := startServe(s.cfg.Binary, s.cfg.Workload, s.cfg.ServeMaxSessions, s.cfg.Log)
			if err != nil {
				s.Close()
				return err
			}
			s.mu.Lock()
			s.serve = append(s.serve, stop)
			s.mu.Unlock()
			targets = append(targets, url)
		}
	}
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	if err := s.startShards(ctx, targets); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { s.Signal(syscall.SIGINT) })
	s.mu.Lock()
	s.unforward = stop
	s.mu.Unlock()
	return nil
}

// startShards starts shard processes 0..n-1, shard i against targets[i % len(targets)] when
// there are reference servers; an interrupt stops it starting more (the ones started are
// signalled once Start has returned).
func (s *Supervisor) startShards(ctx context.Context, targets []string) error {
	n := s.cfg.Count
	for i := range n {
		if ctx.Err() != nil {
			return nil
		}
		file := filepath.Join(s.cfg.Dir, fmt.Sprintf("shard-%d.json", i))
		// An earlier run's shard export under this name would be merged as this run's, if
		// this shard wrote none: it goes first (only a regular file, as outfile would replace).
		if fi, err := os.Lstat(file); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(file); err != nil {
				s.Signal(syscall.SIGTERM)
				s.Wait()
				return fmt.Errorf("removing the earlier run's %s: %w", file, err)
			}
		}
		args := append([]string{"run", s.cfg.Workload,
			"--shard", fmt.Sprintf("%d/%d", i, n),
			"--start-at", s.cfg.Start.Format(time.RFC3339Nano),
			"--out", file, "--progress", "json", "--quiet", "--formats", "none"}, s.cfg.Args...)
		if len(targets) > 0 {
			args = append(args, "--target", targets[i%len(targets)])
		}
		p, err := startProc(s.cfg.Binary, args, i, file, s.cfg.Log)
		if err != nil {
			s.Signal(syscall.SIGTERM)
			s.Wait()
			return fmt.Errorf("starting shard %d: %w", i, err)
		}
		s.mu.Lock()
		s.shards = append(s.shards, p)
		s.mu.Unlock()
	}
	return nil
}

// Signal sends sig to every shard started, by its PID.
func (s *Supervisor) Signal(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.shards {
		p.signal(sig)
	}
}

func (s *Supervisor) started() []*proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shards
}

// Wait waits for every shard started to end and its output to be read.
func (s *Supervisor) Wait() {
	for _, p := range s.started() {
		<-p.exited
	}
}

// Close stops passing the context's end on and stops the reference server process once,
// whoever asks first (the run's end or Abandon); a later caller waits for it to be stopped.
func (s *Supervisor) Close() {
	s.mu.Lock()
	stop, unforward := s.serve, s.unforward
	s.mu.Unlock()
	if unforward != nil {
		unforward()
	}
	s.serveOnce.Do(func() {
		for _, f := range stop {
			f()
		}
	})
}

// Abandon is a second signal: each shard gets SIGINT again (removing the proxies it made on an
// external toxiproxy-server and exiting at once), is killed if it has not ended within
// childGrace, and the reference server is stopped, so that the caller leaves no child behind.
func (s *Supervisor) Abandon() {
	s.Signal(syscall.SIGINT)
	deadline := time.NewTimer(childGrace)
	defer deadline.Stop()
	for _, p := range s.started() {
		select {
		case <-p.exited:
		case <-deadline.C:
			deadline.Reset(0) // the others get no more time either
			p.kill()
			<-p.exited
		}
	}
	s.Close()
}

// Status adds up the shards' last status lines, group by group, in the order of names.
func (s *Supervisor) Status(names []string) []GroupStatus {
	out := make([]GroupStatus, len(names))
	index := make(map[string]int, len(names))
	for i, n := range names {
		out[i].Name = n
		index[n] = i
	}
	for _, p := range s.started() {
		p.mu.Lock()
		for _, g := range p.last.Groups {
			if i, ok := index[g.Name]; ok {
				out[i].Add(g)
			}
		}
		p.mu.Unlock()
	}
	return out
}

// Phase is the phase the shards report (the first that reports one) and every fault in force
// in any of them.
func (s *Supervisor) Phase() (phase string, faults []string) {
	for _, p := range s.started() {
		p.mu.Lock()
		if phase == "" {
			phase = p.last.Phase
		}
		for _, f := range p.last.Faults {
			if !slices.Contains(faults, f) {
				faults = append(faults, f)
			}
		}
		p.mu.Unlock()
	}
	return phase, faults
}

// proc is one shard process and the last status line it reported.
type proc struct {
	index  int
	file   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	last   Status
	exited chan struct{} // closed once the process has ended and its output was read
}

func startProc(bin string, args []string, index int, file string, log io.Writer) (*proc, error) {
	p := &proc{index: index, file: file, cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	p.cmd.SysProcAttr = childAttr()
	pipe, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(p.exited)
		sc := bufio.NewScanner(pipe)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if st, ok := ParseStatus(line); ok {
				p.mu.Lock()
				p.last = Status{Phase: st.Phase, Faults: st.Faults, Groups: st.Groups, Generator: st.Generator}
				p.mu.Unlock()
				continue
			}
			fmt.Fprintf(log, "shard %d: %s\n", index, line)
		}
		_, _ = io.Copy(io.Discard, pipe) // a line over the buffer: read to the end all the same
		_ = p.cmd.Wait()
	}()
	return p, nil
}

func (p *proc) signal(sig os.Signal) {
	if p != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(sig) // a process this one started, by its PID
	}
}

func (p *proc) kill() { p.signal(syscall.SIGKILL) }
