package tsworker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/policy"
)

// A Worker is one node process (worker.mjs) holding up to
// ClientsPerWorker clients of one TypeScript library, driven over JSON lines on its stdin
// and stdout. It is started with the group's first session, watched (a worker that exits
// while the run goes on is a problem of the run, and its clients' calls fail at once rather
// than hang), and ended by its PID when the group ends.

// ClientsPerWorker is how many clients one node worker holds (measured: bench --clients).
const ClientsPerWorker = 500

// Msg is one line of the protocol, either way.
type Msg struct {
	Op   string `json:"op,omitempty"`
	Ev   string `json:"ev,omitempty"`
	C    int    `json:"c"`
	Q    int64  `json:"q,omitempty"`
	URL  string `json:"url,omitempty"`
	Name string `json:"name,omitempty"`
	// TimeoutMS is the application's call timeout, for a worker whose library has none of its
	// own (mcp-go's); the TypeScript SDKs take theirs from Opts.
	TimeoutMS int64           `json:"timeout_ms,omitempty"`
	Opts      map[string]any  `json:"opts,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Args      any             `json:"args,omitempty"`
	Progress  string          `json:"progress,omitempty"`
	Session   string          `json:"session,omitempty"`
	Protocol  string          `json:"protocol,omitempty"`
	Error     string          `json:"error,omitempty"`
	Tools     json.RawMessage `json:"tools,omitempty"`
	Library   string          `json:"library,omitempty"`
	Version   string          `json:"version,omitempty"`
	PID       int             `json:"pid,omitempty"`
	// A call's result.
	OK            bool   `json:"ok,omitempty"`
	IsError       bool   `json:"is_error,omitempty"`
	Class         string `json:"class,omitempty"`
	Message       string `json:"message,omitempty"`
	Status        int    `json:"status,omitempty"`
	Code          any    `json:"code,omitempty"`
	Gone          bool   `json:"gone,omitempty"`
	Misclassified bool   `json:"misclassified,omitempty"`
	TimedOut      bool   `json:"timed_out,omitempty"`
	Answered      bool   `json:"answered,omitempty"`
}

// ErrGone is the answer to every request of a worker that has exited.
var ErrGone = errors.New("the worker process holding this client exited")

type Worker struct {
	cmd     *exec.Cmd
	what    string // "node worker", in errors
	stdin   io.WriteCloser
	wmu     sync.Mutex
	w       *bufio.Writer
	exited  chan struct{} // closed when the process has exited and its output is read
	library string
	version string

	mu      sync.Mutex
	pending map[int64]chan Msg // calls and lists waiting, by q
	opens   map[int]chan Msg   // opens and closes waiting, by client
	ended   map[int]chan struct{}
	nextQ   int64
	stderr  tail
	exitErr error
}

// Check says what is missing to run a TypeScript library kind, or nil: node, or the
// libraries (Locate finds them, and says what to run when it cannot).
func Check(kind string) error {
	if _, err := Locate(library(kind)); err != nil {
		return fmt.Errorf("policy %s runs the TypeScript library under node: %w", kind, err)
	}
	return nil
}

// library is the worker's --library for kind.
func library(kind string) string {
	if kind == policy.ClientTSClient {
		return "client"
	}
	return "sdk"
}

// Start starts a node worker of kind's library and waits for its hello.
func Start(ctx context.Context, kind string) (*Worker, error) {
	lib := library(kind)
	dir, err := Locate(lib) // the binary's own script, written beside the libraries
	if err != nil {
		return nil, fmt.Errorf("policy %s runs the TypeScript library under node: %w", kind, err)
	}
	cmd := exec.Command("node", Script, "--library", lib)
	cmd.Dir = dir
	return StartCommand(ctx, cmd, "node worker")
}

// StartCommand starts cmd as a worker that speaks this protocol (the node worker, or another
// process built to speak it: clients/mcpgoworker's) and waits for its hello. what names it in
// errors.
func StartCommand(ctx context.Context, cmd *exec.Cmd, what string) (*Worker, error) {
	w := &Worker{cmd: cmd, what: what, exited: make(chan struct{}), pending: map[int64]chan Msg{},
		opens: map[int]chan Msg{}, ended: map[int]chan struct{}{}}
	cmd.Stderr = &w.stderr
	var err error
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s: %w", what, err)
	}
	w.w = bufio.NewWriter(w.stdin)
	ready := make(chan Msg, 1)
	go w.read(stdout, ready)
	select {
	case m := <-ready:
		w.library, w.version = m.Library, m.Version
		return w, nil
	case <-w.exited:
		return nil, fmt.Errorf("the %s exited before it was ready: %v; %s", what, w.exitErr, w.stderr.String())
	case <-ctx.Done():
		w.Stop(time.Second)
		return nil, fmt.Errorf("the %s was not ready in time: %w", what, ctx.Err())
	}
}

// read hands the worker's lines to whoever waits for them, until its stdout ends; then it
// reaps the process and fails everything still waiting.
func (w *Worker) read(stdout io.Reader, ready chan<- Msg) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		var m Msg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		w.deliver(m, ready)
	}
	err := w.cmd.Wait()
	w.mu.Lock()
	w.exitErr = err
	if err == nil {
		w.exitErr = errors.New("exit status 0")
	}
	pend, opens, ended := w.pending, w.opens, w.ended
	w.pending, w.opens, w.ended = map[int64]chan Msg{}, map[int]chan Msg{}, map[int]chan struct{}{}
	w.mu.Unlock()
	close(w.exited)
	for _, ch := range pend {
		ch <- Msg{Ev: "result", Class: "WorkerExited", Message: ErrGone.Error()}
	}
	for _, ch := range opens {
		ch <- Msg{Ev: "open_failed", Error: ErrGone.Error()}
	}
	for _, ch := range ended {
		close(ch)
	}
}

func (w *Worker) deliver(m Msg, ready chan<- Msg) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch m.Ev {
	case "ready":
		ready <- m
	case "result", "listed":
		if ch := w.pending[m.Q]; ch != nil {
			delete(w.pending, m.Q)
			ch <- m
		}
	case "opened", "open_failed", "closed":
		if ch := w.opens[m.C]; ch != nil {
			delete(w.opens, m.C)
			ch <- m
		}
	case "ended":
		if ch := w.ended[m.C]; ch != nil {
			delete(w.ended, m.C)
			close(ch)
		}
	}
}

// send writes one command line.
func (w *Worker) send(m Msg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if _, err := w.w.Write(append(b, '\n')); err != nil {
		return ErrGone
	}
	if err := w.w.Flush(); err != nil {
		return ErrGone
	}
	return nil
}

// Request sends m and waits for its answer: by q for calls and lists, by client otherwise.
func (w *Worker) Request(ctx context.Context, m Msg) (Msg, error) {
	ch := make(chan Msg, 1)
	w.mu.Lock()
	select {
	case <-w.exited:
		w.mu.Unlock()
		return Msg{}, ErrGone
	default:
	}
	if m.Op == "call" || m.Op == "list" {
		w.nextQ++
		m.Q = w.nextQ
		w.pending[m.Q] = ch
	} else {
		w.opens[m.C] = ch
	}
	w.mu.Unlock()
	if err := w.send(m); err != nil {
		return Msg{}, err
	}
	select {
	case r := <-ch:
		if r.Class == "WorkerExited" || (r.Ev == "open_failed" && r.Error == ErrGone.Error()) {
			return r, ErrGone
		}
		return r, nil
	case <-ctx.Done():
		w.mu.Lock()
		delete(w.pending, m.Q)
		if w.opens[m.C] == ch {
			delete(w.opens, m.C)
		}
		w.mu.Unlock()
		return Msg{}, ctx.Err()
	}
}

// Library and Version are the library the worker loaded and its version, as it said hello.
func (w *Worker) Library() string { return w.library }

// Version is the loaded library's version (see Library).
func (w *Worker) Version() string { return w.version }

// PID is the node process's id.
func (w *Worker) PID() int { return w.cmd.Process.Pid }

// Exited is closed once the process has exited and its output is read.
func (w *Worker) Exited() <-chan struct{} { return w.exited }

// Ended is closed when the library closes client c by itself, or the worker exits.
func (w *Worker) Ended(c int) <-chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.exited:
		close(ch)
	default:
		w.ended[c] = ch
	}
	return ch
}

// ExitedEarly returns why the worker exited, if it has.
func (w *Worker) ExitedEarly() error {
	select {
	case <-w.exited:
		w.mu.Lock()
		defer w.mu.Unlock()
		return fmt.Errorf("%s pid %d exited: %v; stderr: %s", w.what, w.cmd.Process.Pid, w.exitErr, w.stderr.String())
	default:
		return nil
	}
}

// Stop ends the worker: its stdin closes (it closes its clients and exits), and after grace
// the process this worker started is killed by its handle.
func (w *Worker) Stop(grace time.Duration) {
	w.wmu.Lock()
	_ = w.stdin.Close()
	w.wmu.Unlock()
	select {
	case <-w.exited:
	case <-time.After(grace):
		_ = w.cmd.Process.Kill()
		<-w.exited
	}
}

// tail keeps the last few KiB written to it (a worker's stderr, for the problem line).
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-2048:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	if s == "" {
		return "(nothing)"
	}
	return s
}
