package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mcpchaos/mcpchaos/results"
)

// Outcome maps Run's error and export to the error that decides how the run ended: a gate
// (results.GateError) for an abort, a system not steady and failed thresholds, which a failed
// rollback does not hide; a setup failure's cause; and a shard leaves its thresholds to the
// merge.
func TestOutcome(t *testing.T) {
	w := tinyWorkload(t, "tiny", 3)
	whole, err := NewPlan(w)
	if err != nil {
		t.Fatal(err)
	}
	shard, err := NewPlan(w, WithShard(0, 2))
	if err != nil {
		t.Fatal(err)
	}
	failed := &results.Export{Thresholds: []results.ThresholdResult{{Expr: "overall.misattributed_errors == 0", Actual: "2"}}}
	passed := &results.Export{}
	cause := errors.New("connection refused")
	gate := func(err error) bool {
		var ge *results.GateError
		return errors.As(err, &ge)
	}
	for _, tc := range []struct {
		name string
		err  error
		plan *Plan
		exp  *results.Export
		gate bool
		want string
	}{
		{"passed", nil, whole, passed, false, ""},
		{"thresholds failed", nil, whole, failed, true, "1 of 1 thresholds failed: overall.misattributed_errors == 0 (actual 2)"},
		{"a shard's thresholds", nil, shard, failed, false, ""},
		{"aborted", &AbortError{Reason: "p99 over 1s"}, whole, passed, true, "p99 over 1s"},
		{"not steady", &NotSteadyError{Probes: []string{"health: 503"}}, whole, passed, true, (&NotSteadyError{Probes: []string{"health: 503"}}).Error()},
		{"rollback under a failed gate", &RollbackError{Failed: []string{"undo"}}, whole, failed, true, "1 of 1 thresholds failed: overall.misattributed_errors == 0 (actual 2)"},
		{"rollback", &RollbackError{Failed: []string{"undo"}}, whole, passed, false, (&RollbackError{Failed: []string{"undo"}}).Error()},
		{"setup", fmt.Errorf("start: %w", &SetupError{Err: cause}), whole, passed, false, "connection refused"},
		{"panic", &PanicError{Msg: "boom"}, whole, passed, false, "boom; the export was written"},
	} {
		got := Outcome(tc.err, tc.plan, tc.exp)
		msg := ""
		if got != nil {
			msg = got.Error()
		}
		if msg != tc.want || gate(got) != tc.gate {
			t.Errorf("%s: Outcome = %v (gate %v), want %q (gate %v)", tc.name, got, gate(got), tc.want, tc.gate)
		}
	}
	if SetupCause(&SetupError{Err: cause}) != cause || SetupCause(cause) != nil {
		t.Error("SetupCause: want the cause of a SetupError only")
	}
}
