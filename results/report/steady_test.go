package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/results"
)

// The report shows each probe's verdict (a failed one with why) and each rollback's outcome;
// a run without them shows neither heading.
func TestReportSteadyState(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := export(t, 1, start)
	v := 9.0
	e.SteadyState = &results.SteadyState{Title: "no <leak>", Probes: []results.SteadyProbe{
		{Name: "held", Kind: "promql", When: []string{"before", "after"}, Tolerance: "value <= 5",
			Runs: []results.ProbeRun{{When: "after", AtS: 10.1, Value: &v, Pass: false, Why: "outside the tolerance value <= 5: 9 is not <= 5"}}},
		{Name: "cut-check", Kind: "command", When: []string{"during"}, During: "lb-idle-timeout", Runs: []results.ProbeRun{}},
	}}
	e.SteadyState.Judge()
	e.Rollbacks = []results.ActionAt{{Action: "undo", Kind: "exec", Detail: "sh exited 0"}, {Action: "ready", Kind: "wait_for", Error: "not ready within 1s"}}
	plain := export(t, 2, start.Add(time.Hour))
	var buf bytes.Buffer
	if err := Write(&buf, []Run{{File: "a.json", Export: e}, {File: "b.json", Export: plain}}, Options{Generated: start}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{"<h3>Steady state: no &lt;leak&gt;</h3>", `<span class="fail">NOT STEADY</span>`,
		"<code>held</code>", "9 is not &lt;= 5", "during (lb-idle-timeout)", "not run", "<h3>Rollbacks</h3>",
		"sh exited 0", `<span class="fail">FAIL</span> not ready within 1s`} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(html, "<h3>Steady state"); n != 1 {
		t.Errorf("%d steady-state sections, want only the run that has one", n)
	}
}
