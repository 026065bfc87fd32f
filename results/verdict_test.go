package results

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// The gate of an export: failed thresholds (unless left to the merge) and a failed
// session-leak check, joined in one GateError that errors.As finds through wrapping.
func TestGateErr(t *testing.T) {
	if ThresholdsErr([]ThresholdResult{{Pass: true}}) != nil {
		t.Error("passing thresholds gate the run")
	}
	e := &Export{Thresholds: []ThresholdResult{
		{Expr: "overall.misattributed_errors == 0", Pass: false, Actual: "3"},
		{Expr: "probe.sessions_dead > 0", Pass: true, Actual: "2"},
	}}
	if err := VerdictErr(e); err == nil || err.Error() != "1 of 2 thresholds failed: overall.misattributed_errors == 0 (actual 3)" {
		t.Errorf("VerdictErr = %v", err)
	}
	if err := GateErr(e, false); err != nil {
		t.Errorf("a shard's thresholds are the merge's to judge: GateErr(e, false) = %v", err)
	}
	e.Run.SessionLeak = &SessionLeak{Judged: true, Verdict: "LEAK: 40 held"}
	err := fmt.Errorf("wrapped: %w", GateErr(e, false))
	var ge *GateError
	if !errors.As(err, &ge) || ge.Msg != "session-leak check failed: LEAK: 40 held" {
		t.Errorf("GateErr with a leak = %v", err)
	}
}

// The threshold table: nothing without thresholds, else a blank line, the table and the note.
func TestWriteThresholdTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteThresholdTable(&b, nil, "a note"); err != nil || b.Len() != 0 {
		t.Errorf("no thresholds wrote %q, %v", b.String(), err)
	}
	rs := []ThresholdResult{{Expr: "overall.tool_calls_ok > 0", Pass: true, Actual: "12"}}
	if err := WriteThresholdTable(&b, rs, "judged on the merge"); err != nil {
		t.Fatal(err)
	}
	want := "\nthreshold                  actual  verdict\noverall.tool_calls_ok > 0  12      pass\n0 of 1 thresholds failed\njudged on the merge\n"
	if b.String() != want {
		t.Errorf("table:\n%q\nwant\n%q", b.String(), want)
	}
}
