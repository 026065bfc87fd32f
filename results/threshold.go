package results

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mcpchaos/mcpchaos/gate"
)

// ThresholdResult is one threshold as judged, as the export records it.
type ThresholdResult struct {
	Expr        string    `json:"expr"`
	AbortOnFail bool      `json:"abort_on_fail,omitempty"`
	Pass        bool      `json:"pass"`
	Value       *float64  `json:"value,omitempty"` // the metric's value, in Unit; absent when it had none
	Unit        gate.Unit `json:"unit"`
	Actual      string    `json:"actual"`           // the value for people, e.g. "63.2ms", or why there is none
	Reason      string    `json:"reason,omitempty"` // why it failed without a value
	// AbortedRun is true for the threshold that stopped the run early.
	AbortedRun bool `json:"aborted_run,omitempty"`
}

// JudgeThreshold judges one threshold against an export's numbers. A metric without a value (a
// percentile of an empty histogram, a group the export does not have) fails: a release gate
// must not pass on what was never measured.
func JudgeThreshold(t gate.Threshold, e *Export) ThresholdResult {
	r := ThresholdResult{Expr: t.Expr, AbortOnFail: t.AbortOnFail, Unit: t.Metric.Unit()}
	g := e.Group(t.Scope)
	if g == nil {
		r.Actual = "no such group"
		r.Reason = fmt.Sprintf("the run has no group %q", t.Scope)
		return r
	}
	if why := e.WithheldWhy(t.Scope, t.Metric.Name); why != "" {
		// A figure the run withheld is no measurement: judged, it would pass or fail on a number
		// the server did not produce.
		r.Actual = withheldMark(why)
		r.Reason = fmt.Sprintf("%s.%s is withheld (%s), so the threshold cannot be judged", t.Scope, t.Metric.Name, why)
		return r
	}
	v, ok := Value(t.Metric, g)
	if !ok {
		r.Actual = "no samples"
		r.Reason = fmt.Sprintf("%s.%s has no samples, so the threshold cannot be judged", t.Scope, t.Metric.Name)
		return r
	}
	if t.Metric.Kind() == gate.KindRetryAmplification && g.Counters["sessions_dead"] == 0 {
		// A ratio of nothing is no measurement: 0.00 would pass "< 2" on a run where no session died.
		r.Actual = "no data"
		r.Reason = fmt.Sprintf("%s.retry_amplification is dead-session requests per dead session, and no session died, so the threshold cannot be judged", t.Scope)
		return r
	}
	r.Value = &v
	r.Actual = t.Metric.Format(v)
	r.Pass = t.Holds(v)
	return r
}

// Judge judges every threshold against an export.
func Judge(e *Export, ths []gate.Threshold) []ThresholdResult {
	out := make([]ThresholdResult, len(ths))
	for i, t := range ths {
		out[i] = JudgeThreshold(t, e)
	}
	return out
}

// Failed counts the thresholds that failed.
func Failed(rs []ThresholdResult) int {
	n := 0
	for _, r := range rs {
		if !r.Pass {
			n++
		}
	}
	return n
}

// ParseThresholds parses recorded threshold results back into thresholds, to judge them
// again (after a merge).
func ParseThresholds(rs []ThresholdResult) ([]gate.Threshold, error) {
	ths := make([]gate.Threshold, 0, len(rs))
	for _, r := range rs {
		t, err := gate.ParseThreshold(r.Expr)
		if err != nil {
			return nil, err
		}
		t.AbortOnFail = r.AbortOnFail
		ths = append(ths, t)
	}
	return ths, nil
}

// WriteThresholds prints the pass/fail table.
func WriteThresholds(w io.Writer, rs []ThresholdResult) error {
	if len(rs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "threshold\tactual\tverdict")
	for _, r := range rs {
		verdict := "pass"
		if !r.Pass {
			verdict = "FAIL"
			if r.AbortedRun {
				verdict = "FAIL (aborted the run)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Expr, r.Actual, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	n := Failed(rs)
	_, err := fmt.Fprintf(w, "%d of %d thresholds failed\n", n, len(rs))
	return err
}
