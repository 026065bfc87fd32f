package engine

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
)

// Option sets how a run is carried out (not what it does: that is the Plan).
type Option func(*runOptions)

type runOptions struct {
	observers   []Observer
	toolVersion string
	stderr      io.Writer
	abandon     *Abandoner
	onStart     func(start time.Time)
	onProblems  func(problems []string)
}

// WithObserver adds an observer fed while the run goes on (progress, live metrics).
func WithObserver(o Observer) Option {
	return func(ro *runOptions) { ro.observers = append(ro.observers, o) }
}

// WithToolVersion is the version the export names as the tool's.
func WithToolVersion(v string) Option {
	return func(ro *runOptions) { ro.toolVersion = v }
}

// WithStderr is where the run writes what it must say at once (a panic's stack, a proxy it
// could not remove); default os.Stderr.
func WithStderr(w io.Writer) Option {
	return func(ro *runOptions) { ro.stderr = w }
}

// WithAbandoner lets a caller remove the run's proxies on an external toxiproxy-server at
// once, from any goroutine (a second signal, before the process exits).
func WithAbandoner(a *Abandoner) Option {
	return func(ro *runOptions) { ro.abandon = a }
}

// WithReady is called once the run is set up, with the time its clients will start (later
// than now with a plan's StartAt).
func WithReady(fn func(start time.Time)) Option {
	return func(ro *runOptions) { ro.onStart = fn }
}

// WithProblems is called once a run that went on has ended, with what went wrong in it, a
// line each (also in the export: run.error when the run could not measure what it was asked
// to, run.notes otherwise).
func WithProblems(fn func(problems []string)) Option {
	return func(ro *runOptions) { ro.onProblems = fn }
}

func newRunOptions(opts []Option) runOptions {
	ro := runOptions{toolVersion: "dev", stderr: os.Stderr}
	for _, o := range opts {
		if o != nil { // a nil Option is no option, as in NewPlan
			o(&ro)
		}
	}
	if ro.abandon == nil {
		ro.abandon = &Abandoner{}
	}
	return ro
}

// Abandoner removes, when asked, the proxies that the runs it was given to have on an
// external toxiproxy-server, without waiting for the runs to end. Its zero value is ready.
type Abandoner struct {
	mu     sync.Mutex
	exts   []*faults.External
	groups []*faults.Groups // the runs' commands' process groups, killed on Abandon
}

// addGroups records a run's process groups; the run forgets them (forgetGroups) when it ends.
func (a *Abandoner) addGroups(g *faults.Groups) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.groups = append(a.groups, g)
}

func (a *Abandoner) forgetGroups(g *faults.Groups) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.groups = slices.DeleteFunc(a.groups, func(x *faults.Groups) bool { return x == g })
}

func (a *Abandoner) add(ext *faults.External) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.exts = append(a.exts, ext)
}

// forget drops a run's injector once the run has removed its proxies itself.
func (a *Abandoner) forget(ext *faults.External) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.exts = slices.DeleteFunc(a.exts, func(e *faults.External) bool { return e == ext })
}

// Abandon kills the process groups of the runs' commands (a rollback in flight, what an exec
// action left running) and removes the proxies, waiting at most 3 s; what it could not remove
// it says on stderr with the command that removes it later.
func (a *Abandoner) Abandon(stderr io.Writer) {
	a.mu.Lock()
	exts := append([]*faults.External(nil), a.exts...)
	groups := append([]*faults.Groups(nil), a.groups...)
	a.mu.Unlock()
	for _, g := range groups {
		for _, line := range g.End() {
			fmt.Fprintln(stderr, "mcpchaos:", line)
		}
	}
	for _, ext := range exts {
		done := make(chan error, 1)
		go func() { done <- ext.Close() }()
		select {
		case err := <-done:
			if err != nil {
				fmt.Fprintln(stderr, "mcpchaos: removing proxies:", err)
			}
		case <-time.After(3 * time.Second):
			fmt.Fprintf(stderr, "mcpchaos: the toxiproxy-server did not answer within 3s; remove what is left with mcpchaos faults clean --toxiproxy URL --prefix %s\n", ext.Prefix())
		}
	}
}
