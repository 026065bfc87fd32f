package results_test

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/gate"
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
	for _, m := range ms {
		if _, ok := results.Value(m, &e.Groups[0]); !ok {
			t.Errorf("%s has no value in a full export", m.Name)
		}
	}
}
