package compare

import (
	"bytes"
	"encoding/xml"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/generator"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/resultstest"
)

// serverLatency is a server_latency histogram as a server on a starved machine gives it: most
// replies in 200-600 µs, a tenth of them waiting for a CPU (5-105 ms, more in some runs than
// in others), each plus added.
func serverLatency(t *testing.T, seed uint64, added time.Duration) results.Histogram {
	rng := rand.New(rand.NewPCG(seed, 1))
	rec := metrics.NewRecorder("g", "probe", 1)
	starved := 50 + rng.IntN(150) // 5-20% of the replies
	for i := range 1000 {
		d := time.Duration(200+rng.IntN(400)) * time.Microsecond
		if i < starved {
			d = time.Duration(5+rng.IntN(100)) * time.Millisecond
		}
		rec.Record(metrics.ServerLatency, i, d+added)
	}
	g, err := results.FromSnapshot(rec.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	return g.Histograms[gate.FloorHist]
}

// starvedRun is a run of the sample distribution whose load generator was starved; added is
// added to every reply of its server (the server got slower; the rest is the same build).
func starvedRun(t *testing.T, seed uint64, added time.Duration) *results.Export {
	e := resultstest.RoundTrip(t, resultstest.Sample(t, seed, 1))
	for _, g := range e.Groups {
		g.Histograms[gate.FloorHist] = serverLatency(t, seed, added)
	}
	for _, g := range e.Groups { // the hazards stay as they were: the server's sessions did not change
		for _, h := range []string{"misattributed_errors", "stale_events_applied", "reinit_collisions", "retries_against_dead", "replayed_errors_delivered", "silent_substitutions"} {
			g.Counters[h] = 0
		}
	}
	e.Generator = &generator.Report{Seconds: 10, Windows: 10, Starved: true, StarvedS: 9,
		Starving: []generator.Window{{FromS: 0, ToS: 9, Why: "timer lag p99 20ms"}}}
	return e
}

func starvedBaseline(t *testing.T) []results.Part {
	var ps []results.Part
	for i, seed := range []uint64{100, 101, 102} {
		ps = append(ps, results.Part{File: []string{"b1.json", "b2.json", "b3.json"}[i], Export: starvedRun(t, seed, 0)})
	}
	return ps
}

// On a starved runner the server's floor (server_latency.p5, the kernel's clock) is judged:
// a server slower on every reply regresses, the same server is ok, and the timing rows a
// starved runner moves are held back, said in the verdict line.
func TestCompareFloorOnAStarvedRunner(t *testing.T) {
	bases := starvedBaseline(t)
	floor := gate.FloorHist + "." + gate.FloorStat

	slow := Baseline(bases, results.Part{File: "slow.json", Export: starvedRun(t, 7, 5*time.Millisecond)}, gate.DefaultTolerances())
	if r := row(slow, "probe", floor); r.Verdict != VerdictRegressed {
		t.Errorf("a slower server on a starved runner: %s %s (%s), want regressed", floor, r.Verdict, r.Note)
	}
	if r := row(slow, "probe", gate.FloorHist+".p50"); r.Verdict != VerdictInconclusive {
		t.Errorf("server_latency.p50 on a starved runner: %s (%s), want inconclusive: a server on the starved machine moves it", r.Verdict, r.Note)
	}
	if slow.Outcome != OutcomeRegressed {
		t.Errorf("verdict %q, want %q", slow.Outcome, OutcomeRegressed)
	}

	same := Baseline(bases, results.Part{File: "same.json", Export: starvedRun(t, 7, 0)}, gate.DefaultTolerances())
	if r := row(same, "probe", floor); r.Verdict == VerdictRegressed || r.Verdict == VerdictInconclusive || r.Verdict == VerdictInfo {
		t.Errorf("the same server on a starved runner: %s %s (%s), want judged and not regressed", floor, r.Verdict, r.Note)
	}
	if same.Outcome != OutcomeOK || same.Inconclusive == 0 || same.Regressions != 0 {
		t.Errorf("same build: verdict %q, %d held back, %d regressions; want ok with rows held back", same.Outcome, same.Inconclusive, same.Regressions)
	}
	var buf bytes.Buffer
	Write(&buf, same, false)
	if !strings.HasPrefix(buf.String(), "verdict: OK: ") || !strings.Contains(buf.String(), "held back: the runner was starved") {
		t.Errorf("text:\n%s", buf.String())
	}

	// Without the floor (Toxiproxy on another machine, HTTP/2): nothing times the server on a
	// starved runner, and the verdict is inconclusive.
	for _, p := range append(bases, results.Part{File: "same.json", Export: starvedRun(t, 7, 0)}) {
		for _, g := range p.Export.Groups {
			delete(g.Histograms, gate.FloorHist)
		}
	}
	cur := starvedRun(t, 7, 0)
	for _, g := range cur.Groups {
		delete(g.Histograms, gate.FloorHist)
	}
	none := Baseline(bases, results.Part{File: "same.json", Export: cur}, gate.DefaultTolerances())
	if none.Outcome != OutcomeInconclusive {
		t.Errorf("no floor on a starved runner: verdict %q, want inconclusive", none.Outcome)
	}
}

// One verdict word everywhere: a run that could not run says so in the text, the Markdown and
// JUnit, never "N regressions"; JUnit carries the verdict as a test case.
func TestCompareVerdictWords(t *testing.T) {
	bases := starvedBaseline(t)
	broken := starvedRun(t, 7, 0)
	broken.Run.Error = "connecting to the target: connection refused"
	c := Baseline(bases, results.Part{File: "cur.json", Export: broken}, gate.DefaultTolerances())
	if c.Outcome != OutcomeCouldNotRun {
		t.Fatalf("verdict %q, want %q", c.Outcome, OutcomeCouldNotRun)
	}
	var text, md, ju bytes.Buffer
	Write(&text, c, false)
	WriteMarkdown(&md, c, false)
	if err := WriteJUnit(&ju, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "verdict: COULD NOT RUN") || strings.Contains(text.String(), "REGRESSED") {
		t.Errorf("text:\n%s", text.String())
	}
	if !strings.HasPrefix(md.String(), "### mcpchaos compare: Could not run") || strings.Contains(md.String(), "Regressed") {
		t.Errorf("markdown:\n%s", md.String())
	}
	var doc results.JUnitSuites
	if err := xml.Unmarshal(ju.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	v := doc.Suites[0].Cases[0]
	if v.Name != "compare verdict" || v.Failure == nil || v.Failure.Type != OutcomeCouldNotRun {
		t.Errorf("JUnit's verdict case: %+v", v)
	}

	cur := starvedRun(t, 7, 0)
	for _, p := range bases {
		for _, g := range p.Export.Groups {
			delete(g.Histograms, gate.FloorHist)
		}
	}
	for _, g := range cur.Groups {
		delete(g.Histograms, gate.FloorHist)
	}
	c = Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	ju.Reset()
	if err := WriteJUnit(&ju, c); err != nil {
		t.Fatal(err)
	}
	doc = results.JUnitSuites{}
	if err := xml.Unmarshal(ju.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if v := doc.Suites[0].Cases[0]; c.Outcome != OutcomeInconclusive || v.Skipped == nil || v.Failure != nil || !strings.Contains(v.Skipped.Message, "INCONCLUSIVE") {
		t.Errorf("inconclusive (%q) in JUnit: %+v", c.Outcome, v)
	}
}

// Session facts are the server's counts: judged on a starved runner, said in words.
func TestCompareSessionFactsOnAStarvedRunner(t *testing.T) {
	bases := starvedBaseline(t)
	for _, p := range bases {
		p.Export.Group("probe").Counters["sessions_dead"] = 3
	}
	cur := starvedRun(t, 7, 0)
	cur.Group("probe").Counters["sessions_dead"] = 6
	c := Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	if r := row(c, "probe", "sessions_dead"); r.Verdict != VerdictRegressed {
		t.Errorf("deaths 3 → 6 on a starved runner: %s (%s), want regressed", r.Verdict, r.Note)
	}
	if c.Outcome != OutcomeRegressed || !slices.ContainsFunc(c.Findings, func(f string) bool {
		return strings.Contains(f, "sessions now die more often") && strings.Contains(f, "group probe lost 6 sessions (was 3)")
	}) {
		t.Errorf("verdict %q, findings %q", c.Outcome, c.Findings)
	}
	cur.Group("probe").Counters["sessions_dead"] = 3
	if r := row(Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances()), "probe", "sessions_dead"); r.Verdict != VerdictSame {
		t.Errorf("the same deaths: %s (%s)", r.Verdict, r.Note)
	}
}
