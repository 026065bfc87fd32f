package results_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/resultstest"
)

// The section goes through a file whole, validates against the published schema, and a file
// whose verdicts disagree with its runs is refused.
func TestSteadyStateInTheExport(t *testing.T) {
	e := resultstest.WithSteady(resultstest.Sample(t, 1, 1), true)
	if e.SteadyState.IsSteady() || e.SteadyState.Probes[1].Verdict != results.ProbeFail || e.SteadyState.Probes[2].Verdict != results.ProbeNotRun {
		t.Fatalf("judged %+v", e.SteadyState)
	}
	back := resultstest.RoundTrip(t, e)
	a, _ := json.Marshal(e)
	b, _ := json.Marshal(back)
	if !bytes.Equal(a, b) {
		t.Errorf("changed on the way through a file:\n%s\n%s", a, b)
	}
	if fp := back.FailedProbes(); len(fp) != 1 || fp[0] != "held (after, at 10.1s): outside the tolerance value <= 5: 9 is not <= 5" {
		t.Errorf("FailedProbes = %q", fp)
	}
	raw, err := results.Schema(2)
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
	if _, err := results.Parse("edited.json", edited); err == nil || !strings.Contains(err.Error(), "steady_state: the verdict is steady, but its probes say otherwise") {
		t.Errorf("an edited verdict was believed: %v", err)
	}
}

func TestSteadyStateJUnitAndSummary(t *testing.T) {
	e := resultstest.WithSteady(resultstest.Sample(t, 1, 1), true)
	e.Rollbacks = append(e.Rollbacks, results.ActionAt{Action: "ready", Kind: "wait_for", Error: "not ready within 1s"})
	var buf bytes.Buffer
	if err := results.WriteJUnit(&buf, e); err != nil {
		t.Fatal(err)
	}
	var doc results.JUnitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	byName := map[string]results.JUnitCase{}
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
	results.WriteSteadyState(&buf, e)
	for _, want := range []string{"steady state: no leak (NOT STEADY)", "FAIL  held", "1 of 2 runs passed (before, after); after at 10.1s: outside", "-     during-cut", "not run (during)", "FAIL  wait_for ready: "} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, buf.String())
		}
	}
}
