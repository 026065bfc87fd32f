package results

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
)

// GateError is a release gate that failed: a threshold (run, merge), a steady-state probe, the
// session-leak check, or a regression (compare). The command exits 99 on it; a Go caller tells
// it from a run that could not be carried out with errors.As.
type GateError struct{ Msg string }

func (e *GateError) Error() string { return e.Msg }

// ThresholdsErr is the gate error for failed threshold results, or nil if all passed.
func ThresholdsErr(rs []ThresholdResult) error {
	var failed []string
	for _, r := range rs {
		if !r.Pass {
			failed = append(failed, fmt.Sprintf("%s (actual %s)", r.Expr, r.Actual))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &GateError{fmt.Sprintf("%d of %d thresholds failed: %s", len(failed), len(rs), strings.Join(failed, "; "))}
}

// VerdictErr is the gate error of an export's thresholds, steady-state probes and
// session-leak check, or nil if all passed.
func VerdictErr(e *Export) error { return GateErr(e, true) }

// GateErr is the gate error of an export: its failed thresholds (when judged here: a shard
// leaves them to the merge) and its failed steady-state probes and session-leak check; nil
// when none failed.
func GateErr(e *Export, thresholds bool) error {
	var gates []string
	if thresholds {
		if g := ThresholdsErr(e.Thresholds); g != nil {
			gates = append(gates, g.Error())
		}
	}
	if l := e.Run.SessionLeak; l.Failed() { // engine/leakcheck.go
		gates = append(gates, "session-leak check failed: "+l.Verdict)
	}
	if ps := e.FailedProbes(); len(ps) > 0 {
		gates = append(gates, fmt.Sprintf("not steady: %s failed: %s", words.Count(len(ps), "steady-state probe"), strings.Join(ps, "; ")))
	}
	if len(gates) > 0 {
		return &GateError{strings.Join(gates, "; ")}
	}
	return nil
}

// WriteThresholdTable prints the pass/fail table after a blank line, and note under it, when
// there are thresholds; nothing when there are none.
func WriteThresholdTable(w io.Writer, rs []ThresholdResult, note string) error {
	if len(rs) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	if err := WriteThresholds(w, rs); err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintln(w, note)
	}
	return nil
}
