package faults

import (
	"bufio"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recorder is an Injector that only remembers which faults are in force.
type recorder struct {
	mu      sync.Mutex
	inForce map[applied]bool
	failAdd map[applied]bool
	failRm  map[applied]bool
}

func newRecorder() *recorder {
	return &recorder{inForce: map[applied]bool{}, failAdd: map[applied]bool{}, failRm: map[applied]bool{}}
}

func (r *recorder) AddProxy(context.Context, string, string) (string, error) {
	return "127.0.0.1:1", nil
}

func (r *recorder) AddToxic(_ context.Context, proxy string, t Toxic) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := applied{proxy, t.Name}
	if r.failAdd[a] || r.inForce[a] {
		return errors.New("refused")
	}
	r.inForce[a] = true
	return nil
}

func (r *recorder) RemoveToxic(_ context.Context, proxy, name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := applied{proxy, name}
	if !r.inForce[a] {
		return errors.New("not in force")
	}
	if r.failRm[a] {
		return errors.New("cannot remove")
	}
	delete(r.inForce, a)
	return nil
}

func (r *recorder) Close() error { return nil }

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.inForce)
}

// run starts RunSchedule in a goroutine; changes arrive on the first
// channel, its result on the second.
func run(ctx context.Context, inj Injector, sched []Scheduled) (<-chan Change, <-chan error) {
	changes := make(chan Change, 64)
	result := make(chan error, 1)
	start := time.Now()
	go func() {
		result <- RunSchedule(ctx, inj, start, sched, func(c Change) { changes <- c })
	}()
	return changes, result
}

func next(t *testing.T, changes <-chan Change) Change {
	t.Helper()
	select {
	case c := <-changes:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no change reported")
		return Change{}
	}
}

// reported returns the changes already reported; call it after RunSchedule has
// returned, when no more can come.
func reported(changes <-chan Change) []Change {
	var all []Change
	for len(changes) > 0 {
		all = append(all, <-changes)
	}
	return all
}

func fault(name string) Toxic {
	return Toxic{Name: name, Type: "latency"}
}

// The schedule's timing runs on the bubble's fake clock: offsets are exact.
func TestRunScheduleOffsets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const unit = 40 * time.Millisecond
		inj := newRecorder()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		changes, result := run(ctx, inj, []Scheduled{
			{Fault: fault("a"), Proxies: []string{"g1", "g2"}, At: unit, For: 2 * unit},
			{Fault: fault("whole-run"), Proxies: []string{"g1"}},
			{Fault: fault("b"), Proxies: []string{"g2"}, At: 3 * unit, For: unit},
		})
		want := []struct {
			at    time.Duration
			fault string
			proxy string
			added bool
		}{
			{0, "whole-run", "g1", true},
			{unit, "a", "g1", true},
			{unit, "a", "g2", true},
			{3 * unit, "a", "g1", false}, // removals before adds at the same instant
			{3 * unit, "a", "g2", false},
			{3 * unit, "b", "g2", true},
			{4 * unit, "b", "g2", false},
		}
		for _, w := range want {
			c := next(t, changes)
			if c.Fault != w.fault || c.Proxy != w.proxy || c.Added != w.added || c.Err != nil {
				t.Fatalf("change %+v, want %+v", c, w)
			}
			if c.At != w.at { // the bubble's clock: exact, however busy the machine
				t.Fatalf("%s on %s (added %t) at %v, want %v", c.Fault, c.Proxy, c.Added, c.At, w.at)
			}
		}
		// The whole-run fault stays until the end.
		select {
		case err := <-result:
			t.Fatalf("returned (%v) while a fault without a window was in force", err)
		default:
		}
		cancel()
		if c := next(t, changes); c.Fault != "whole-run" || c.Added {
			t.Fatalf("after cancel got %+v, want whole-run removed", c)
		}
		if err := <-result; err != nil {
			t.Fatalf("RunSchedule = %v", err)
		}
		if n := inj.count(); n != 0 {
			t.Fatalf("%d faults left in force", n)
		}
	})
}

func TestRunScheduleReturnsWhenAllWindowsEnd(t *testing.T) {
	inj := newRecorder()
	changes, result := run(context.Background(), inj, []Scheduled{
		{Fault: fault("a"), Proxies: []string{"g1"}, At: 0, For: 10 * time.Millisecond},
	})
	select {
	case err := <-result:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("RunSchedule did not return after the last window ended")
	}
	if len(changes) != 2 || inj.count() != 0 {
		t.Fatalf("%d changes, %d faults in force; want 2 and 0", len(changes), inj.count())
	}
}

func TestRunScheduleCancelledEarlyRemovesEverything(t *testing.T) {
	inj := newRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	changes, result := run(ctx, inj, []Scheduled{
		{Fault: fault("a"), Proxies: []string{"g1", "g2"}, For: time.Hour},
		{Fault: fault("later"), Proxies: []string{"g1"}, At: time.Hour},
	})
	next(t, changes)
	next(t, changes)
	cancel()
	if err := <-result; err != nil {
		t.Fatalf("RunSchedule = %v", err)
	}
	var removed []string
	for _, c := range reported(changes) {
		if c.Added || c.Err != nil {
			t.Fatalf("after cancel: %+v", c)
		}
		removed = append(removed, c.Fault+"@"+c.Proxy)
	}
	if !slices.Equal(removed, []string{"a@g2", "a@g1"}) {
		t.Fatalf("removed %v, want a@g2 then a@g1 (reverse order of adding)", removed)
	}
	if n := inj.count(); n != 0 {
		t.Fatalf("%d faults left in force", n)
	}
}

func TestRunScheduleReportsErrors(t *testing.T) {
	inj := newRecorder()
	inj.failAdd[applied{"g2", "a"}] = true
	changes, result := run(context.Background(), inj, []Scheduled{
		{Fault: fault("a"), Proxies: []string{"g1", "g2"}, For: time.Millisecond},
	})
	err := <-result
	if err == nil || err.Error() != "refused" {
		t.Fatalf("RunSchedule = %v, want the add's error", err)
	}
	var got []string
	for _, c := range reported(changes) {
		s := c.Fault + "@" + c.Proxy
		if c.Added {
			s = "+" + s
		} else {
			s = "-" + s
		}
		if c.Err != nil {
			s += "!"
		}
		got = append(got, s)
	}
	// g2's add failed, so there is nothing to remove there.
	if want := []string{"+a@g1", "+a@g2!", "-a@g1"}; !slices.Equal(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
}

func TestRunScheduleReturnsCleanupErrors(t *testing.T) {
	inj := newRecorder()
	inj.failRm[applied{"g1", "a"}] = true
	ctx, cancel := context.WithCancel(context.Background())
	changes, result := run(ctx, inj, []Scheduled{{Fault: fault("a"), Proxies: []string{"g1"}}})
	next(t, changes)
	cancel()
	if err := <-result; err == nil || err.Error() != "cannot remove" {
		t.Fatalf("RunSchedule = %v, want the failed removal's error", err)
	}
	if c := next(t, changes); c.Added || c.Err == nil {
		t.Fatalf("got %+v, want a failed removal", c)
	}
}

func TestRunScheduleRejectsBadSchedules(t *testing.T) {
	tests := []struct {
		name  string
		sched []Scheduled
		want  string
	}{
		{"no name", []Scheduled{{Fault: Toxic{Type: "latency"}, Proxies: []string{"g"}}}, "without a name"},
		{"negative at", []Scheduled{{Fault: fault("a"), Proxies: []string{"g"}, At: -1}}, "negative"},
		{"negative for", []Scheduled{{Fault: fault("a"), Proxies: []string{"g"}, For: -1}}, "negative"},
		{"same name twice on a proxy", []Scheduled{
			{Fault: fault("a"), Proxies: []string{"g"}},
			{Fault: fault("a"), Proxies: []string{"g"}, At: time.Second},
		}, "scheduled twice"},
	}
	for _, tt := range tests {
		inj := newRecorder()
		err := RunSchedule(context.Background(), inj, time.Now(), tt.sched, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: RunSchedule = %v, want an error about %q", tt.name, err, tt.want)
		}
		if inj.count() != 0 {
			t.Errorf("%s: faults applied despite the error", tt.name)
		}
	}
}

// End to end through Toxiproxy: a down window on a real proxy is applied and
// lifted, and the proxy serves again afterwards.
func TestRunScheduleWithEmbeddedDown(t *testing.T) {
	upstream, _ := echoServer(t)
	inj, listen := newProxy(t, upstream)
	changes, result := run(context.Background(), inj, []Scheduled{
		{Fault: Toxic{Name: "outage", Type: TypeDown}, Proxies: []string{"p"}, For: 20 * time.Millisecond},
	})
	if err := <-result; err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 {
		t.Fatalf("%d changes, want 2", len(changes))
	}
	c := dial(t, listen)
	roundTrip(t, c, bufio.NewReader(c))
}

// stuck is an Injector whose adds never return until released: a Toxiproxy whose toxic chain
// cannot be paused.
type stuck struct {
	recorder
	release chan struct{}
}

func (s *stuck) AddToxic(ctx context.Context, proxy string, t Toxic) error {
	<-s.release
	return s.recorder.AddToxic(ctx, proxy, t)
}

// A stuck call is abandoned after the bound with a note; later steps are reported as abandoned
// at once, and the schedule returns when the run ends.
func TestRunScheduleAbandonsAStuckCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inj := &stuck{recorder: *newRecorder(), release: make(chan struct{})}
		defer close(inj.release)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		const bound = 5 * time.Second
		start := time.Now()
		var changes []Change
		err := runSchedule(ctx, inj, start, []Scheduled{
			{Fault: fault("a"), Proxies: []string{"g1"}, At: time.Second},
			{Fault: fault("b"), Proxies: []string{"g2"}, At: 2 * time.Second, For: time.Second},
		}, func(c Change) { changes = append(changes, c) }, bound)
		if !errors.Is(err, ErrAbandoned) {
			t.Fatalf("RunSchedule = %v, want the abandoned call", err)
		}
		if took := time.Since(start); took != time.Minute {
			t.Errorf("returned after %v, want at the run's end (1m)", took)
		}
		want := []struct {
			at    time.Duration
			fault string
			added bool
		}{
			{time.Second + bound, "a", true},  // waited out
			{time.Second + bound, "b", true},  // due already; wedged, not attempted
			{time.Second + bound, "b", false}, // its removal, reported the same way
			{time.Minute, "a", false},         // cleanup at the end: not attempted
		}
		if len(changes) != len(want) {
			t.Fatalf("changes %+v, want %d", changes, len(want))
		}
		for i, w := range want {
			c := changes[i]
			if c.At != w.at || c.Fault != w.fault || c.Added != w.added || !errors.Is(c.Err, ErrAbandoned) {
				t.Errorf("change %d: %+v, want %+v abandoned", i, c, w)
			}
		}
	})
}

// slowAdds is an Injector whose adds take d: a busy Toxiproxy pausing the chains of
// connections that carry large events.
type slowAdds struct {
	recorder
	d time.Duration
}

func (s *slowAdds) AddToxic(ctx context.Context, proxy string, t Toxic) error {
	time.Sleep(s.d)
	return s.recorder.AddToxic(ctx, proxy, t)
}

// A schedule running late when the run ends reports each fault whose time had come but that
// it never applied (issue 30: a starved run's last fault was missing from the fault log, as if
// never planned); a fault planned after the end is not reported, and the one applied is
// removed.
func TestRunScheduleReportsFaultsNotReached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inj := &slowAdds{recorder: *newRecorder(), d: 3 * time.Second}
		start := time.Now()
		ctx, cancel := context.WithDeadline(context.Background(), start.Add(3500*time.Millisecond))
		defer cancel()
		var changes []Change
		err := RunSchedule(ctx, inj, start, []Scheduled{
			{Fault: fault("a"), Proxies: []string{"g1"}, At: time.Second, For: time.Second},
			{Fault: fault("b"), Proxies: []string{"g1", "g2"}, At: 2 * time.Second, For: time.Second},
			{Fault: fault("c"), Proxies: []string{"g1"}, At: 10 * time.Second},
		}, func(c Change) { changes = append(changes, c) })
		if !errors.Is(err, ErrNotReached) {
			t.Fatalf("RunSchedule = %v, want a fault not reached", err)
		}
		want := []struct {
			fault, proxy string
			added        bool
			err          error
		}{
			{"a", "g1", true, nil},           // applied at 4s, 3s late
			{"b", "g1", true, ErrNotReached}, // due at 2s, not applied by the end
			{"b", "g2", true, ErrNotReached},
			{"a", "g1", false, nil}, // cleanup
		}
		if len(changes) != len(want) {
			t.Fatalf("changes %+v, want %d", changes, len(want))
		}
		for i, w := range want {
			c := changes[i]
			if c.Fault != w.fault || c.Proxy != w.proxy || c.Added != w.added || !errors.Is(c.Err, w.err) {
				t.Errorf("change %d: %+v, want %+v", i, c, w)
			}
		}
		if at := changes[1].At; at != 4*time.Second {
			t.Errorf("not reached reported at %v, want when the schedule found the run ended (4s)", at)
		}
	})
}
