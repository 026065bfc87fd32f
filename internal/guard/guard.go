// Package guard recovers panics at the goroutine boundaries mcpchaos owns (client goroutines,
// a fleet's scheduler, the fault schedule, the progress ticker): a panic is reported with its
// stack on stderr, remembered, and ends the run through the hook the run registered, so that
// the run still removes its proxies, writes its export and exits non-zero.
package guard

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

var (
	mu      sync.Mutex
	first   *Panic
	onPanic func()
	stderr  io.Writer = os.Stderr

	hook atomic.Pointer[func(where string)]
)

// SetHook sets (nil: clears) the function Enter calls; tests make it panic to prove a
// goroutine's recovery.
func SetHook(fn func(where string)) {
	if fn == nil {
		hook.Store(nil)
		return
	}
	hook.Store(&fn)
}

// Panic is a recovered panic: where it happened, its value and its stack.
type Panic struct {
	Where string
	Value any
	Stack []byte
}

func (p *Panic) Error() string { return fmt.Sprintf("panic in %s: %v", p.Where, p.Value) }

// Arm starts watching for a run: fn is called (once per panic, from the panicking goroutine)
// to end the run. It forgets any earlier panic.
func Arm(fn func()) {
	mu.Lock()
	defer mu.Unlock()
	first, onPanic = nil, fn
}

// Disarm stops calling the run's hook and returns the first panic recovered since Arm, if any.
func Disarm() *Panic {
	mu.Lock()
	defer mu.Unlock()
	p := first
	first, onPanic = nil, nil
	return p
}

// Catch recovers a panic in the goroutine it is deferred in: defer guard.Catch("client").
func Catch(where string) {
	v := recover()
	if v == nil {
		return
	}
	report(where, v, debug.Stack())
}

// Recovered reports a value already recovered (by a function that must recover itself).
func Recovered(where string, v any) { report(where, v, debug.Stack()) }

func report(where string, v any, stack []byte) {
	p := &Panic{Where: where, Value: v, Stack: stack}
	mu.Lock()
	fmt.Fprintf(stderr, "mcpchaos: panic in %s: %v\n%s\n", where, v, stack)
	if first == nil {
		first = p
	}
	fn := onPanic
	mu.Unlock()
	if fn != nil {
		fn()
	}
}

// Enter marks a goroutine boundary for tests: it calls Hook when one is set.
func Enter(where string) {
	if h := hook.Load(); h != nil {
		(*h)(where)
	}
}
