package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
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
	rec, plain := &recorder{}, &startStop{}
	// A starved machine may let this tiny run make no successful call, which fails it as a
	// run that measured nothing (MeasureError, with its export); the observers are what is
	// checked.
	var me *MeasureError
	exp, err := Run(context.Background(), plan, WithObserver(rec), WithObserver(plain), WithStderr(testWriter{t}))
	if err != nil && !errors.As(err, &me) {
		t.Fatal(err)
	}
	// The run's own timeline observer: samples in time order, every group in each, running
	// totals that never fall and never pass the export's.
	tl := exp.Timeline
	if tl == nil || len(tl.Samples) < 2 {
		t.Fatalf("timeline %+v", tl)
	}
	for i, s := range tl.Samples {
		for _, g := range exp.Groups {
			gs, ok := s.Groups[g.Name]
			if !ok {
				t.Fatalf("sample %d has no group %s", i, g.Name)
			}
			for name, n := range gs.Counters {
				if n > g.Counters[name] || i > 0 && n < tl.Samples[i-1].Groups[g.Name].Counters[name] {
					t.Errorf("sample %d, %s.%s = %d: falls, or passes the export's %d", i, g.Name, name, n, g.Counters[name])
				}
			}
		}
		if i > 0 && s.TS <= tl.Samples[i-1].TS {
			t.Errorf("sample %d at %vs after %vs", i, s.TS, tl.Samples[i-1].TS)
		}
	}
	if last := tl.Samples[len(tl.Samples)-1].Groups["naive"].Counters["sessions_started"]; last == 0 {
		t.Error("the timeline never saw a session start")
	}
	if plain.started != 1 || plain.stopped != 1 {
		t.Errorf("an observer without a tick: started %d, stopped %d times, want once each", plain.started, plain.stopped)
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

// startStop is an observer with no tick: Ticker is optional.
type startStop struct{ started, stopped int }

func (s *startStop) Start(*View) error     { s.started++; return nil }
func (s *startStop) Stop(*View, time.Time) { s.stopped++ }

// tick calls at start, start+every, ... on the run's clock; a tick that came late is not made
// up for. On synctest's fake clock: no sleep in the test, and exact times.
func TestTickOnAFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now().Add(time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		var at []time.Duration
		done := make(chan struct{})
		go func() {
			defer close(done)
			tick(ctx, start, 100*time.Millisecond, func(now time.Time) {
				at = append(at, now.Sub(start))
				if len(at) == 3 {
					time.Sleep(250 * time.Millisecond) // a slow observer: the ticks it missed are skipped
				}
			})
		}()
		time.Sleep(time.Second + 550*time.Millisecond)
		cancel()
		<-done
		want := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond}
		if !slices.Equal(at, want) {
			t.Errorf("ticks at %v, want %v", at, want)
		}
	})
}

// The observers of a run: each Ticker ticks on its own goroutine until the run's context
// ends, an observer without a tick is only started and stopped, and stop calls Stop in reverse
// order of Start, after the last tick.
func TestObservingOnAFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &View{Start: time.Now()}
		rec, plain := &orderRecorder{name: "ticker"}, &orderRecorder{name: "plain"}
		var order []string
		rec.log, plain.log = &order, &order
		o := &observing{v: v, obs: []Observer{&tickingRecorder{rec}, plain}}
		ctx, cancel := context.WithTimeout(context.Background(), 450*time.Millisecond)
		defer cancel()
		o.start(ctx)
		<-ctx.Done()
		o.stop(context.Background(), time.Now())
		want := []string{"ticker observe", "ticker observe", "ticker observe", "ticker observe", "ticker observe", "plain stop", "ticker stop"}
		if !slices.Equal(order, want) {
			t.Errorf("calls %v, want %v", order, want)
		}
	})
}

type orderRecorder struct {
	name string
	log  *[]string
	mu   sync.Mutex
}

func (r *orderRecorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.log = append(*r.log, r.name+" "+s)
}
func (r *orderRecorder) Start(*View) error     { return nil }
func (r *orderRecorder) Stop(*View, time.Time) { r.add("stop") }

type tickingRecorder struct{ *orderRecorder }

func (r *tickingRecorder) Every() time.Duration     { return 100 * time.Millisecond }
func (r *tickingRecorder) Observe(*View, time.Time) { r.add("observe") }
