// Package guard recovers panics at the goroutine boundaries mcpchaos owns (client goroutines,
// a fleet's scheduler, the fault schedule, the observers): a panic is reported with its stack,
// remembered, and ends its run through the stop function the run gave its Guard, so that the
// run still removes its proxies, returns its export and exits non-zero.
//
// A Guard belongs to one run and travels in that run's context: two runs in one process never
// see each other's panics. The package holds no mutable state of its own.
package guard

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
)

// Panic is a recovered panic: where it happened, its value and its stack.
type Panic struct {
	Where string
	Value any
	Stack []byte
}

func (p *Panic) Error() string { return fmt.Sprintf("panic in %s: %v", p.Where, p.Value) }

// Guard is one run's panic watch.
type Guard struct {
	stop   func()
	stderr io.Writer

	mu    sync.Mutex
	first *Panic
}

// New returns a run's Guard: stop is called (from the panicking goroutine, once per panic) to
// end the run; stacks are written to stderr (nil: os.Stderr).
func New(stop func(), stderr io.Writer) *Guard {
	if stderr == nil {
		stderr = os.Stderr
	}
	return &Guard{stop: stop, stderr: stderr}
}

// First is the first panic recovered, if any.
func (g *Guard) First() *Panic {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.first
}

func (g *Guard) report(where string, v any, stack []byte) {
	p := &Panic{Where: where, Value: v, Stack: stack}
	g.mu.Lock()
	fmt.Fprintf(g.stderr, "mcpchaos: panic in %s: %v\n%s\n", where, v, stack)
	if g.first == nil {
		g.first = p
	}
	g.mu.Unlock()
	if g.stop != nil {
		g.stop()
	}
}

type ctxKey struct{}

// With returns ctx carrying g: the goroutines started under it report their panics to g.
func With(ctx context.Context, g *Guard) context.Context {
	return context.WithValue(ctx, ctxKey{}, g)
}

// From is the Guard ctx carries, or nil.
func From(ctx context.Context) *Guard {
	g, _ := ctx.Value(ctxKey{}).(*Guard)
	return g
}

// Catch recovers a panic in the goroutine it is deferred in and reports it to the run of ctx:
// defer guard.Catch(ctx, "client"). Outside a run (no Guard in ctx) the stack still goes to
// stderr and the goroutine ends quietly.
func Catch(ctx context.Context, where string) {
	v := recover()
	if v == nil {
		return
	}
	Recovered(ctx, where, v)
}

// Recovered reports a value already recovered (by a function that must recover itself).
func Recovered(ctx context.Context, where string, v any) {
	g := From(ctx)
	if g == nil {
		g = New(nil, nil)
	}
	g.report(where, v, debug.Stack())
}
