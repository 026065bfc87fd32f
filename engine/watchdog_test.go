package engine

import (
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// The watchdog judges abort_on_fail thresholds on the recorders' atomics, not on an export:
// each metric such a threshold may name reads what the export will say, a group's or the sum
// of all (overall); metrics that can fall are not read live.
func TestLiveGroupValues(t *testing.T) {
	a, b := metrics.NewRecorder("naive", "naive", 2), metrics.NewRecorder("probe", "probe", 2)
	a.Add(metrics.MisattributedErrors, 3)
	b.Add(metrics.MisattributedErrors, 4)
	a.Error(metrics.ErrReset)
	a.Error(metrics.ErrReset)
	b.Error(metrics.ErrConnect)
	a.AddFalseHealthy(1500 * time.Millisecond)
	for _, c := range []struct {
		expr string
		g    liveGroup
		want float64
		ok   bool
	}{
		{"naive.misattributed_errors == 0", liveGroup{a}, 3, true},
		{"overall.misattributed_errors == 0", liveGroup{a, b}, 7, true},
		{"overall.errors.reset == 0", liveGroup{a, b}, 2, true},
		{"overall.errors == 0", liveGroup{a, b}, 3, true},
		{"naive.false_healthy_seconds < 1", liveGroup{a}, 1.5, true},
		{"naive.retry_amplification < 2", liveGroup{a}, 0, false},
		{"naive.probe_latency.p99 < 1ms", liveGroup{a}, 0, false},
	} {
		th, err := gate.ParseThreshold(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := c.g.Value(th.Metric)
		if v != c.want || ok != c.ok {
			t.Errorf("%s: %v %v, want %v %v", c.expr, v, ok, c.want, c.ok)
		}
	}
}
