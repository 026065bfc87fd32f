package compare

import (
	"github.com/mcpchaos/mcpchaos/results"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/results/resultstest"
)

// compare says a failed probe in the current run, and a probe that passed in every baseline and
// fails now is a regression.
func TestCompareSteadyState(t *testing.T) {
	base := results.Part{File: "base.json", Export: resultstest.WithSteady(resultstest.Sample(t, 1, 1), false)}
	cur := results.Part{File: "cur.json", Export: resultstest.WithSteady(resultstest.Sample(t, 1, 1), true)}
	c := Compare(base, cur, nil)
	r := row(c, "steady_state", "held")
	if r.Verdict != VerdictRegressed || !strings.Contains(r.Note, "now fails: after at 10.1s") {
		t.Errorf("held row %+v", r)
	}
	if r := row(c, "steady_state", "healthz"); r.Verdict != VerdictSame {
		t.Errorf("healthz row %+v", r)
	}
	if r := row(c, "steady_state", "during-cut"); r.Verdict != VerdictMissing {
		t.Errorf("a probe that never ran: %+v", r)
	}
	if !strings.Contains(c.CurrentRun, "the current run was not steady: 1 steady-state probe failed (held (after") {
		t.Errorf("current run %q", c.CurrentRun)
	}
	if len(c.Findings) == 0 || !strings.HasPrefix(c.Findings[0], "the system is no longer steady: probe held passed in every baseline and now fails: after at 10.1s") {
		t.Errorf("findings %q", c.Findings)
	}
	if c.Regressions < 1 {
		t.Errorf("regressions %d", c.Regressions)
	}
	same := Compare(cur, cur, nil)
	if r := row(same, "steady_state", "held"); r.Verdict != VerdictSame || r.Note != "fails in both" {
		t.Errorf("failing in both: %+v", r)
	}
}
