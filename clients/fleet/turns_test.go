package fleet

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/refserver"
)

// TestLoopTurnsCorrectsFromIntendedStarts checks the schedule's bookkeeping exactly: turns
// that pass while a call runs are missed, and when the call gets its result each missed turn
// is timed from its own turn, the call from its turn, with a gap in the schedule (calls off
// for a while) kept as it was.
func TestLoopTurnsCorrectsFromIntendedStarts(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	const period = 100 * time.Millisecond
	var l loopTurns
	var got []time.Duration
	record := func(d time.Duration) { got = append(got, d) }

	if !l.take(at(0), period) {
		t.Fatal("an idle loop did not take its turn")
	}
	// Turns at 100 and 200 pass while the call runs; calls are off at 300; 400 passes too.
	for _, ms := range []int{100, 200, 400} {
		if l.take(at(ms), period) {
			t.Fatalf("turn at %dms taken while the previous call still ran", ms)
		}
	}
	l.release(at(450), 0, period, record)
	want := []time.Duration{450 * time.Millisecond, 350 * time.Millisecond, 250 * time.Millisecond, 50 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Fatalf("corrected samples %v, want %v", got, want)
	}

	// The next call starts clean: no missed turns carried over.
	got = nil
	if !l.take(at(500), period) {
		t.Fatal("the loop did not take its turn after its call ended")
	}
	l.release(at(520), 0, period, record)
	if want := []time.Duration{20 * time.Millisecond}; !slices.Equal(got, want) {
		t.Fatalf("corrected samples %v, want %v", got, want)
	}

	// A call without a result records nothing, missed turns included.
	got = nil
	l.take(at(600), period)
	l.take(at(700), period)
	l.release(time.Time{}, 0, period, record)
	if len(got) != 0 {
		t.Fatalf("a call without a result recorded %v", got)
	}
	if !l.take(at(800), period) {
		t.Fatal("the loop stayed busy after a call without a result")
	}
}

// TestSlowToolSkipsTurns runs a fleet against the reference server's slow tool, which takes
// longer than the loop's period: turns are skipped, and the corrected latency, timed from the
// turns, is no better than the raw one and has a sample for each answered call and its missed
// turns.
func TestSlowToolSkipsTurns(t *testing.T) {
	inst := startTarget(t, refserver.Config{SessionTTL: time.Minute, SlowSteps: 3, SlowStep: 20 * time.Millisecond})
	pol, err := policy.New("naive", policy.Config{Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	rec := metrics.NewRecorder("slow", "naive", 2)
	nobody := truth.Func(func(string) (time.Time, bool) { return time.Time{}, false })
	f := New(GroupConfig{
		Name: "slow", Clients: 2, Policy: pol, Probe: "ping", DeadStatuses: []int{404},
		RetryBackoff: 10 * time.Millisecond, CallEvery: 10 * time.Millisecond, Tool: "slow",
		Arguments: map[string]any{},
	}, endpoint(inst.URL), rec, nobody, func(time.Duration) bool { return true })

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { f.Run(ctx, time.Now()); close(done) }()
	for deadline := time.Now().Add(time.Minute); ; {
		s := rec.Snapshot()
		if s.Counter(metrics.ToolCallsOK) >= 6 && s.Counter(metrics.CallsSkipped) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("after a minute: %d calls ok, %d skipped", s.Counter(metrics.ToolCallsOK), s.Counter(metrics.CallsSkipped))
		}
		time.Sleep(10 * time.Millisecond) // polling counters, not synchronising
	}
	cancel()
	<-done

	s := rec.Snapshot()
	raw, cor := s.Hist(metrics.ToolCallLatency), s.Hist(metrics.ToolCallLatencyCorrected)
	skipped := s.Counter(metrics.CallsSkipped)
	// Calls cut by the run's end may have missed turns with no result to time them by.
	if cor.TotalCount() < raw.TotalCount()+1 || cor.TotalCount() > raw.TotalCount()+skipped {
		t.Errorf("corrected count %d, want between raw+1 (%d) and raw+skipped (%d)", cor.TotalCount(), raw.TotalCount()+1, raw.TotalCount()+skipped)
	}
	// The corrected samples leave out the generator's dispatch lag of the turn's exchanges (a
	// call and its one retry here), which the raw ones carry: the slowest corrected sample is
	// no faster than the slowest raw one less that lag.
	if c, r, lag := cor.Max(), raw.Max(), 2*s.Hist(metrics.DispatchLag).Max(); c < r-lag {
		t.Errorf("corrected max %dµs below raw max %dµs less the dispatch lag's max %dµs", c, r, lag)
	}
}
