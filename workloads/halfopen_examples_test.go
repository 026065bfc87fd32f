package workloads

import (
	"testing"
	"time"
)

// The half-open examples load with the fault and the server regime their comments say: the
// reference server refusing a second stream (stream_conflict), one half_open fault holding
// the server's side for hold ms from at.
func TestHalfOpenExamples(t *testing.T) {
	for _, tc := range []struct {
		file   string
		at     time.Duration
		hold   int64 // ms
		groups int
	}{
		{"examples/half-open.yaml", 2 * time.Second, 4000, 2},
		{"examples/half-open-libraries.yaml", 3 * time.Second, 4000, 5},
	} {
		w, err := Load(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if !w.Target.Builtin.StreamConflict || len(w.Groups) != tc.groups {
			t.Errorf("%s: stream_conflict %v, %d groups, want true and %d", tc.file, w.Target.Builtin.StreamConflict, len(w.Groups), tc.groups)
		}
		if len(w.Faults) != 1 || w.Faults[0].Toxic != "half_open" || w.Faults[0].Attributes["hold"] != tc.hold || w.Faults[0].At != tc.at {
			t.Errorf("%s: faults %+v, want one half_open holding %d ms at %s", tc.file, w.Faults, tc.hold, tc.at)
		}
	}
}
