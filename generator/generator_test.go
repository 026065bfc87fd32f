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

// A merged run is as starved as its most starved shard.
func TestCombine(t *testing.T) {
	a := &Report{Seconds: 10, CPUs: 2, CPUSeconds: 1, Windows: 10, TimerLag: Dist{Count: 5, P99US: 100}}
	b := &Report{Seconds: 11, CPUs: 2, CPUSeconds: 2, Windows: 11, Starved: true, StarvedS: 4, TimerLag: Dist{Count: 5, P99US: 9000},
		Starving: []Window{{FromS: 1, ToS: 5, Why: "timer lag p99 9ms"}}}
	c := Combine([]*Report{a, nil, b})
	if !c.Starved || c.StarvedS != 4 || c.CPUs != 4 || c.CPUSeconds != 3 || c.TimerLag.P99US != 9000 || c.TimerLag.Count != 10 || len(c.Starving) != 1 {
		t.Errorf("combined %+v", c)
	}
	if a.Starved || len(a.Starving) != 0 {
		t.Error("Combine changed its first report")
	}
	if Combine(nil) != nil {
		t.Error("no reports combine into one")
	}
	if why := c.Why(); !strings.HasPrefix(why, "starved 4.0s of 11.0s: timer lag p99 9ms") {
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
