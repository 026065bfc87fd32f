package results_test

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/resultstest"
)

// The catalog covers every counter and histogram the recorders have, and parses itself.
func TestMetricNames(t *testing.T) {
	ms := gate.Metrics()
	if len(ms) != len(gate.MetricNames()) {
		t.Fatal("catalog does not parse itself")
	}
	e := resultstest.Sample(t, 3, 1)
	// Sample's sessions never die (resultstest); three answered dead after about 3 s give
	// session_life its values, as a run against a URL target records them.
	h := metrics.NewHistogram()
	for _, us := range []int64{2_900_000, 3_000_000, 3_100_000} {
		if err := h.RecordValue(us); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := results.HistogramOf(h)
	if err != nil {
		t.Fatal(err)
	}
	e.Groups[0].Histograms[gate.SessionLifeHist] = enc
	for _, m := range ms {
		if _, ok := results.Value(m, &e.Groups[0]); !ok {
			t.Errorf("%s has no value in a full export", m.Name)
		}
	}
}
