package generator

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A window passes the bound on any of its limits, and says which.
func TestBoundJudgesEachLimit(t *testing.T) {
	half, most := 0.3, 0.9
	for _, tc := range []struct {
		l    Live
		want string
	}{
		{Live{TimerLagP99: 800, SchedP99: 200, CPUWaitShare: &half}, ""},
		{Live{TimerLagP99: 43000}, "timer lag p99 43ms"},
		{Live{SchedP99: 16000}, "scheduler latency p99 16ms"},
		{Live{CPUWaitShare: &most, CPUShare: 0.6}, "90% of CPU time waiting for a CPU"},
		{Live{CPUWaitShare: &most, CPUShare: 0.01}, ""}, // a brief waker's wait is the timer lag's to weigh
	} {
		if got := Bound.judge(tc.l); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.l, got, tc.want)
		}
	}
}

// Shards merged into one run: starved windows are a union over time (twelve shards starved in
// the same seconds starved the run for those seconds, not twelve times), CPUs count once per
// machine, the run-queue wait is of the summed times, and the worst lag is kept.
func TestCombine(t *testing.T) {
	w1, w2 := 0.5, 0.8
	a := &Report{Seconds: 10, CPUs: 2, CPUSeconds: 1, CPUWaitS: &w1, Windows: 10, Machine: "m1", TimerLag: Dist{Count: 5, P99US: 100}}
	b := &Report{Seconds: 10, CPUs: 2, CPUSeconds: 2, CPUWaitS: &w2, Windows: 10, Machine: "m1", Starved: true, StarvedS: 6,
		TimerLag: Dist{Count: 5, P99US: 9000}, Starving: []Window{{FromS: 1, ToS: 5, Why: "timer lag p99 9ms"}, {FromS: 7, ToS: 9, Why: "x"}}}
	c := &Report{Seconds: 9, CPUs: 2, CPUSeconds: 1, Windows: 9, Machine: "m1", Starved: true, StarvedS: 5,
		Starving: []Window{{FromS: 2, ToS: 7, Why: "scheduler latency p99 20ms"}}}
	got := Combine([]Part{{Report: a}, {}, {Report: b}, {Report: c, OffsetS: 1}})
	// c's window is 3..8 on the run's clock: with b's 1..5 and 7..9, one stretch 1..9.
	if len(got.Starving) != 1 || got.Starving[0].FromS != 1 || got.Starving[0].ToS != 9 || got.Starving[0].Why != "timer lag p99 9ms" {
		t.Errorf("starved windows %+v, want one stretch 1..9", got.Starving)
	}
	if got.StarvedS != 8 || !got.Starved || got.StarvedShards != 2 || got.Shards != 3 || got.Seconds != 10 {
		t.Errorf("starved %v %.1fs of %.1fs, %d of %d shards", got.Starved, got.StarvedS, got.Seconds, got.StarvedShards, got.Shards)
	}
	if !got.MostlyStarved() {
		t.Error("8 s of 10 is most of the run")
	}
	if got.CPUs != 2 || got.CPUSeconds != 4 || got.CPUShare != 0.2 || got.Machine != "m1" {
		t.Errorf("one machine of 2 CPUs, 4 CPU seconds in 10 s: cpus %d, cpu_seconds %v, share %v, machine %q", got.CPUs, got.CPUSeconds, got.CPUShare, got.Machine)
	}
	// Waits 0.5 and 0.8 s beside 1 and 2 s on a CPU (c recorded none): 1.3 / 4.3.
	if got.CPUWaitShare == nil || *got.CPUWaitShare < 0.302 || *got.CPUWaitShare > 0.303 {
		t.Errorf("cpu_wait_share %v, want 1.3/4.3", got.CPUWaitShare)
	}
	if got.TimerLag.P99US != 9000 || got.TimerLag.Count != 10 {
		t.Errorf("timer lag %+v: the worst p99, the counts summed", got.TimerLag)
	}
	if a.Starved || len(a.Starving) != 0 || len(b.Starving) != 2 || b.Starving[0].ToS != 5 {
		t.Error("Combine changed a shard's report")
	}
	other := *a
	other.Machine = "m2"
	if two := Combine([]Part{{Report: a}, {Report: &other}}); two.CPUs != 4 || two.Machine != "" {
		t.Errorf("two machines of 2 CPUs: cpus %d, machine %q", two.CPUs, two.Machine)
	}
	if Combine(nil) != nil {
		t.Error("no reports combine into one")
	}
	if why := got.Why(); !strings.HasPrefix(why, "starved 8.0s of 10.0s: timer lag p99 9ms") {
		t.Errorf("why %q", why)
	}
}

// A sampler run for a bounded time closes its windows and fills the report; whether this
// machine starved it is not asserted (it depends on the machine), only that the figures are
// consistent with each other.
func TestSamplerReport(t *testing.T) {
	s := New()
	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	defer cancel()
	s.Run(ctx)
	r := s.Report()
	if r.Windows < 1 || r.Seconds <= 0 || r.TimerLag.Count == 0 || r.CPUs < 1 || r.Bound == "" {
		t.Fatalf("report %+v", r)
	}
	if r.StarvedS > r.Seconds+1e-9 || (r.Starved && len(r.Starving) == 0) || r.CPUShare < 0 {
		t.Errorf("inconsistent report %+v", r)
	}
	if l := s.Live(); l.AtS <= 0 || l.StarvedS != r.StarvedS {
		t.Errorf("live %+v against report %+v", l, r)
	}
}
