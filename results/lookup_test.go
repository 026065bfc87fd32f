package results_test

import (
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
)

// A group read by a name the export lacks, or from no export at all (Run returned none), reads
// zero or says why: it never panics.
func TestGroupLookupNeverPanics(t *testing.T) {
	var none *results.Export
	if g := none.Group("probe"); g != nil || g.Counter(metrics.SessionsStarted) != 0 || g.Error(metrics.ErrReset) != 0 || g.Histogram(metrics.ProbeLatency).Count != 0 {
		t.Fatalf("a nil export's group: %+v", g)
	}
	if _, err := none.LookupGroup("probe"); err == nil || !strings.Contains(err.Error(), "no export") {
		t.Fatalf("LookupGroup on no export: %v", err)
	}
	exp := &results.Export{Groups: []results.Group{{Name: "naive"}, {Name: "probe"}}}
	for _, name := range []string{"Probe", "", "overall "} {
		if _, err := exp.LookupGroup(name); err == nil || !strings.Contains(err.Error(), "use one of naive, probe, overall") {
			t.Errorf("LookupGroup(%q): %v", name, err)
		}
	}
	if g, err := exp.LookupGroup("overall"); err != nil || g != &exp.Overall {
		t.Errorf("LookupGroup(overall) = %p, %v; want the overall numbers", g, err)
	}
}
