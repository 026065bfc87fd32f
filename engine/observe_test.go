package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// recorder is an observer that notes what it was called with, in order.
type recorder struct {
	mu     sync.Mutex
	calls  []string
	groups []string
}

func (r *recorder) note(s string) { r.mu.Lock(); r.calls = append(r.calls, s); r.mu.Unlock() }

func (r *recorder) Every() time.Duration  { return 100 * time.Millisecond }
func (r *recorder) Start(*View) error     { r.note("start"); return nil }
func (r *recorder) Stop(*View, time.Time) { r.note("stop") }
func (r *recorder) Observe(v *View, now time.Time) {
	if now.Before(v.Start) {
		r.note("before the start")
	}
	gs := v.Groups()
	r.mu.Lock()
	r.groups = r.groups[:0]
	for _, g := range gs {
		r.groups = append(r.groups, g.Name)
	}
	r.mu.Unlock()
	r.note("observe")
}

// An observer is started once before any tick, ticks from the run's start while it goes on,
// and is stopped once after the last tick; its view has the run's groups.
func TestObserverLifecycle(t *testing.T) {
	t.Parallel()
	plan, err := NewPlan(tinyWorkload(t, "observed", 1))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	// A starved machine may let this tiny run make no successful call, which fails it as a
	// run that measured nothing (MeasureError); the observers' lifecycle is what is checked.
	var me *MeasureError
	if _, err := Run(context.Background(), plan, WithObserver(rec), WithStderr(testWriter{t})); err != nil && !errors.As(err, &me) {
		t.Fatal(err)
	}
	calls := rec.calls
	if len(calls) < 3 || calls[0] != "start" || calls[len(calls)-1] != "stop" {
		t.Fatalf("calls %v, want start, observe..., stop", calls)
	}
	for _, c := range calls[1 : len(calls)-1] {
		if c != "observe" {
			t.Fatalf("calls %v: %q between start and stop", calls, c)
		}
	}
	if !slices.Equal(rec.groups, []string{"naive", "probe"}) {
		t.Errorf("the view's groups: %v", rec.groups)
	}
}
