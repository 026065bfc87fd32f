package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/workloads"
)

// A calls phase that the workload's own outage reached into, where a group missed most of its
// turns, gets a note naming the faults in force (the reader learns the target was cut as asked,
// not that sessions were lost); a phase the faults left alone, or where the group made most of
// its calls, gets none.
func TestOutageNotes(t *testing.T) {
	s := time.Second
	w := &workloads.Workload{
		Duration: 7 * s,
		Phases: []workloads.Phase{
			{Name: "active", Start: 0, Duration: s, Calls: true},
			{Name: "quiet", Start: s, Duration: 3500 * time.Millisecond},
			{Name: "after-ttl", Start: 4500 * time.Millisecond, Duration: 2500 * time.Millisecond, Calls: true},
		},
		Faults: []workloads.Fault{{Name: "proxy-restart", At: 1800 * time.Millisecond, For: 4200 * time.Millisecond}},
	}
	dist := disturbed(w)
	by := []phaseTurns{{Turns: 100, NotMade: 80}, {}, {Turns: 310, NotMade: 218}}
	got := outageNotes(w, "naive", by, dist)
	if len(got) != 1 {
		t.Fatalf("notes = %q, want one for after-ttl", got)
	}
	for _, want := range []string{"group naive: phase after-ttl (4.5s to 7s): 218 of its 310 turns", "proxy-restart (1.8s to 6s)", "not sessions the server lost"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("%q does not say %q", got[0], want)
		}
	}
	by[2].NotMade = 100
	if got := outageNotes(w, "naive", by, dist); len(got) != 0 {
		t.Errorf("a group that made most of its calls got notes: %q", got)
	}
}
