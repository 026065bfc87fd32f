package results

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func f(v float64) *float64 { return &v }

// withSteady gives e a steady_state section: healthz passed, held failed once (if fail), and
// a rollback.
func withSteady(e *Export, fail bool) *Export {
	held := SteadyProbe{Name: "held", Kind: "promql", When: []string{"before", "after"}, Tolerance: "value <= 5",
		Runs: []ProbeRun{{When: "before", AtS: -0.2, TookS: 0.01, Value: f(3), Detail: "value 3", Pass: true}}}
	after := ProbeRun{When: "after", AtS: 10.1, TookS: 0.01, Value: f(4), Detail: "value 4", Pass: true}
	if fail {
		after.Value, after.Detail, after.Pass, after.Why = f(9), "value 9", false, "outside the tolerance value <= 5: 9 is not <= 5"
	}
	held.Runs = append(held.Runs, after)
	e.SteadyState = &SteadyState{Title: "no leak", Probes: []SteadyProbe{
		{Name: "healthz", Kind: "http", When: []string{"continuously"}, Runs: []ProbeRun{{When: "continuously", AtS: 1, Value: f(200), Detail: "status 200", Pass: true}}},
		held,
		{Name: "during-cut", Kind: "command", When: []string{"during"}, During: "cut", Runs: []ProbeRun{}},
	}}
	e.SteadyState.Judge()
	e.Rollbacks = []ActionAt{{Action: "undo", Kind: "exec", StartedAtS: 10.2, EndedAtS: 10.3, Detail: "sh exited 0"}}
	return e
}

// The section goes through a file whole, validates against the published schema, and a file
// whose verdicts disagree with its runs is refused.
func TestSteadyStateInTheExport(t *testing.T) {
	e := withSteady(sample(t, 1, 1), true)
	if e.SteadyState.IsSteady() || e.SteadyState.Probes[1].Verdict != ProbeFail || e.SteadyState.Probes[2].Verdict != ProbeNotRun {
		t.Fatalf("judged %+v", e.SteadyState)
	}
	back := roundTrip(t, e)
	a, _ := json.Marshal(e)
	b, _ := json.Marshal(back)
	if !bytes.Equal(a, b) {
		t.Errorf("changed on the way through a file:\n%s\n%s", a, b)
	}
	if fp := back.FailedProbes(); len(fp) != 1 || fp[0] != "held (after, at 10.1s): outside the tolerance value <= 5: 9 is not <= 5" {
		t.Errorf("FailedProbes = %q", fp)
	}
	raw, err := Schema(2)
	if err != nil {
		t.Fatal(err)
	}
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		t.Fatal(err)
	}
	rs, err := sch.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	json.Unmarshal(a, &doc)
	if err := rs.Validate(doc); err != nil {
		t.Errorf("an export with a steady_state is not valid against the schema: %v", err)
	}
	doc["steady_state"].(map[string]any)["probes"].([]any)[0].(map[string]any)["verdict"] = "maybe"
	if rs.Validate(doc) == nil {
		t.Error("the schema takes any verdict")
	}
	json.Unmarshal(a, &doc)
	doc["steady_state"].(map[string]any)["verdict"] = "steady"
	edited, _ := json.Marshal(doc)
	if _, err := Parse("edited.json", edited); err == nil || !strings.Contains(err.Error(), "steady_state: the verdict is steady, but its probes say otherwise") {
		t.Errorf("an edited verdict was believed: %v", err)
	}
}

func TestSteadyStateJUnitAndSummary(t *testing.T) {
	e := withSteady(sample(t, 1, 1), true)
	e.Rollbacks = append(e.Rollbacks, ActionAt{Action: "ready", Kind: "wait_for", Error: "not ready within 1s"})
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, e); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	byName := map[string]junitCase{}
	for _, c := range doc.Suites[0].Cases {
		byName[c.Name] = c
	}
	if c := byName["steady state: held"]; c.Failure == nil || !strings.Contains(c.Failure.Message, "9 is not <= 5") || !strings.Contains(c.SystemOut, "before at -0.2s: value 3") {
		t.Errorf("held case %+v", c)
	}
	if c := byName["steady state: healthz"]; c.Failure != nil || c.Name == "" {
		t.Errorf("healthz case %+v", c)
	}
	if c := byName["rollback: ready"]; c.Failure == nil || byName["rollback: undo"].Failure != nil {
		t.Errorf("rollback cases %+v, %+v", c, byName["rollback: undo"])
	}
	if doc.Failures != 2 {
		t.Errorf("%d failures, want held and ready", doc.Failures)
	}
	buf.Reset()
	WriteSteadyState(&buf, e)
	for _, want := range []string{"steady state: no leak (NOT STEADY)", "FAIL  held", "1 of 2 runs passed (before, after); after at 10.1s: outside", "-     during-cut", "not run (during)", "FAIL  wait_for ready: "} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, buf.String())
		}
	}
}

// compare says a failed probe in the current run, and a probe that passed in every baseline and
// fails now is a regression.
func TestCompareSteadyState(t *testing.T) {
	base := Part{File: "base.json", Export: withSteady(sample(t, 1, 1), false)}
	cur := Part{File: "cur.json", Export: withSteady(sample(t, 1, 1), true)}
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
