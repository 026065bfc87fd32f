package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/results"
)

// gateError is a release gate that failed: a threshold (run, merge) or a regression (compare).
// It exits 99.
type gateError struct{ msg string }

func (e *gateError) Error() string { return e.msg }

// thresholdsGate is the gate error for failed threshold results, or nil if all passed.
func thresholdsGate(rs []results.ThresholdResult) error {
	var failed []string
	for _, r := range rs {
		if !r.Pass {
			failed = append(failed, fmt.Sprintf("%s (actual %s)", r.Expr, r.Actual))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &gateError{fmt.Sprintf("%d of %d thresholds failed: %s", len(failed), len(rs), strings.Join(failed, "; "))}
}

// flagThresholds parses the thresholds given with a flag (--threshold, --threshold-abort).
// What they may be about (the workload's groups, a metric that only grows for an abort) is
// checked once, by engine.NewPlan, whose error names the threshold's field; planError turns
// it back into the flag.
func flagThresholds(exprs []string, flag string) ([]gate.Threshold, error) {
	var ths []gate.Threshold
	for _, expr := range exprs {
		th, err := gate.ParseThreshold(expr)
		if err != nil {
			return nil, usagef("%s: %v", flag, err)
		}
		ths = append(ths, th)
	}
	return ths, nil
}

// printThresholds prints the pass/fail table after a blank line, when there are thresholds.
func printThresholds(w io.Writer, rs []results.ThresholdResult, note string) error {
	if len(rs) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	if err := results.WriteThresholds(w, rs); err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintln(w, note)
	}
	return nil
}

// verdictError is the gate error of an export's thresholds, steady-state probes and
// session-leak check, or nil if all passed.
func verdictError(e *results.Export) error { return gateOf(e, true) }

// gateOf is the gate error of an export: its failed thresholds (when judged here) and its
// failed steady-state probes; nil when none failed.
func gateOf(e *results.Export, thresholds bool) error {
	var gates []string
	if thresholds {
		if g := thresholdsGate(e.Thresholds); g != nil {
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
		return &gateError{strings.Join(gates, "; ")}
	}
	return nil
}
