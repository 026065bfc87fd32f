package faults

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scheduled is a fault with its window: it is added to each of Proxies at At
// after the start and removed For later; For 0 keeps it until the end.
type Scheduled struct {
	Fault   Toxic
	Proxies []string
	At, For time.Duration
}

// Change reports one fault being added to or removed from one proxy, for the
// caller's log and progress display. At is when it happened, measured from
// the schedule's start. Err is non-nil if the injector refused.
type Change struct {
	At    time.Duration
	Fault string
	Proxy string
	Added bool
	Err   error
}

// step is one add or removal on one proxy, at an offset from the start.
type step struct {
	at    time.Duration
	fault Toxic
	proxy string
	add   bool
}

type applied struct{ proxy, fault string }

// CallBound is how long RunSchedule waits for one add or removal before it abandons the call.
// A healthy Toxiproxy answers in milliseconds; one that cannot pause a connection's toxic
// chain (a peer that reads nothing, upstream issues 427 and 558) never answers at all.
const CallBound = 5 * time.Second

// ErrAbandoned marks an add or removal that did not finish within CallBound. The call is left
// running; whether its fault is in force is unknown, and the injector is considered wedged:
// the schedule applies nothing more, and its remaining steps are reported with this error.
var ErrAbandoned = errors.New("abandoned: Toxiproxy did not answer in time (a connection's toxic chain could not be paused)")

// RunSchedule applies sched relative to start: it adds each fault at start+At
// on each of its proxies and removes it at start+At+For. It returns once every
// fault with a window has been removed and none without one is in force, or
// when ctx ends; either way, every fault it added and has not yet removed is
// removed before it returns (with ctx's values but not its cancellation).
//
// It runs in the caller's goroutine with one timer. Every add and removal is
// reported to onChange (which may be nil) from that goroutine; the first error
// is returned. A fault that fails to be added on a proxy is not removed there. Every call to
// inj is bounded by bound (CallBound when 0): a call that takes longer is abandoned, wedging
// the schedule (see ErrAbandoned), so RunSchedule returns at most one bound after ctx ends.
// Ending by ctx is the normal end of a run and is not an error; but a fault whose time had
// come and that the schedule, running late, had not applied by then is reported as not
// applied (ErrNotReached) and is an error: the run did not do what it planned.
func RunSchedule(ctx context.Context, inj Injector, start time.Time, sched []Scheduled, onChange func(Change)) (firstErr error) {
	return runSchedule(ctx, inj, start, sched, onChange, CallBound)
}

func runSchedule(ctx context.Context, inj Injector, start time.Time, sched []Scheduled, onChange func(Change), bound time.Duration) (firstErr error) {
	steps, err := plan(sched)
	if err != nil {
		return err
	}
	if onChange == nil {
		onChange = func(Change) {}
	}
	var inForce []applied // in the order added
	wedged := false
	apply := func(ctx context.Context, s step) {
		err := ErrAbandoned
		if !wedged {
			err = within(bound, func() error {
				if s.add {
					return inj.AddToxic(ctx, s.proxy, s.fault)
				}
				return inj.RemoveToxic(ctx, s.proxy, s.fault.Name)
			})
		}
		if errors.Is(err, ErrAbandoned) {
			wedged = true
			verb := "adding"
			if !s.add {
				verb = "removing"
			}
			err = fmt.Errorf("faults: proxy %s: %s fault %s: %w%s", s.proxy, verb, s.fault.Name, err, stalledOn(inj, s.proxy))
		}
		onChange(Change{At: time.Since(start), Fault: s.fault.Name, Proxy: s.proxy, Added: s.add, Err: err})
		if err != nil && firstErr == nil {
			firstErr = err
		}
		a := applied{s.proxy, s.fault.Name}
		if s.add && (err == nil || errors.Is(err, ErrAbandoned)) {
			// An abandoned add may yet take effect; keep it, so the cleanup reports it.
			inForce = append(inForce, a)
		} else if !s.add {
			// A failed removal is not retried: the injector's Close is the
			// backstop for whatever it could not remove.
			inForce = slices.DeleteFunc(inForce, func(b applied) bool { return b == a })
		}
	}
	defer func() {
		cleanup := context.WithoutCancel(ctx)
		pending := slices.Clone(inForce)
		for _, a := range slices.Backward(pending) { // undo in reverse order
			apply(cleanup, step{fault: Toxic{Name: a.fault}, proxy: a.proxy})
		}
	}()

	timer := time.NewTimer(time.Hour)
	timer.Stop() // armed per step below; since Go 1.23 a stopped timer delivers nothing stale
	defer timer.Stop()
	for i, s := range steps {
		if !s.add && !slices.Contains(inForce, applied{s.proxy, s.fault.Name}) {
			continue // its add failed; nothing to remove
		}
		if wait := time.Until(start.Add(s.at)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return firstErr
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			missed(steps[i:], start, onChange, &firstErr)
			return firstErr
		}
		apply(ctx, s)
	}
	if len(inForce) > 0 { // faults that last until the end
		<-ctx.Done()
	}
	return firstErr
}

// ErrNotReached marks a fault whose time came before the run ended but that was never applied:
// the schedule, running late (its calls to a busy Toxiproxy, a starved machine), had not
// reached it when the run ended. Without it the run would read as if the fault had been
// planned and done; a fault that never happened is a problem of the run.
var ErrNotReached = errors.New("not applied: the run ended before the schedule, running late, reached it")

// missed reports each add of rest whose time had come when the run ended as not applied
// (ErrNotReached). rest are the steps not taken, in order; those planned later were not due.
func missed(rest []step, start time.Time, onChange func(Change), firstErr *error) {
	end := time.Since(start)
	for _, s := range rest {
		if s.at > end {
			return
		}
		if !s.add {
			continue
		}
		err := fmt.Errorf("faults: proxy %s: fault %s planned at %v, %v before the end: %w", s.proxy, s.fault.Name, s.at, (end - s.at).Round(time.Millisecond), ErrNotReached)
		onChange(Change{At: end, Fault: s.fault.Name, Proxy: s.proxy, Added: true, Err: err})
		if *firstErr == nil {
			*firstErr = err
		}
	}
}

// stalledOn names the connections of proxy whose clients were not reading when Toxiproxy
// stopped answering, where the injector can tell (Shielded).
func stalledOn(inj Injector, proxy string) string {
	st, ok := inj.(interface{ Stalled(string) []string })
	if !ok {
		return ""
	}
	if conns := st.Stalled(proxy); len(conns) > 0 {
		return "; stalled connections: " + strings.Join(conns, ", ")
	}
	return "; no connection of the proxy was stalled on its client: Toxiproxy itself did not answer"
}

// within runs call and waits for it at most bound; past that, it abandons the call (which
// goes on running) and returns ErrAbandoned.
func within(bound time.Duration, call func() error) error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return ErrAbandoned
	}
}

// plan turns a schedule into steps sorted by time, removals before adds at
// the same instant so a fault can follow another on the same proxy.
func plan(sched []Scheduled) ([]step, error) {
	var steps []step
	names := make(map[applied]bool)
	for i, sc := range sched {
		f := sc.Fault
		if f.Name == "" {
			return nil, fmt.Errorf("faults: schedule entry %d (%s): fault without a name", i+1, f.Type)
		}
		if sc.At < 0 || sc.For < 0 {
			return nil, fmt.Errorf("faults: fault %s: negative offset or duration (at %v, for %v)", f.Name, sc.At, sc.For)
		}
		for _, p := range sc.Proxies {
			if names[applied{p, f.Name}] {
				return nil, fmt.Errorf("faults: fault %s: scheduled twice on proxy %s; give each fault its own name", f.Name, p)
			}
			names[applied{p, f.Name}] = true
			steps = append(steps, step{at: sc.At, fault: f, proxy: p, add: true})
			if sc.For > 0 {
				steps = append(steps, step{at: sc.At + sc.For, fault: f, proxy: p})
			}
		}
	}
	slices.SortStableFunc(steps, func(a, b step) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(boolInt(a.add), boolInt(b.add))
	})
	return steps, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
