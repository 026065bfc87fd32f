package compare

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/generator"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/resultstest"
)

// lived builds an export whose probe group saw sessions answered dead after lives (nil: the
// export predates session_life: no histogram, no declared TTL), the workload declaring ttl.
func lived(t *testing.T, seed uint64, ttl time.Duration, mode string, lives ...time.Duration) results.Part {
	t.Helper()
	e := resultstest.Sample(t, seed, 1)
	for i := range e.Groups {
		g := &e.Groups[i]
		if lives == nil {
			continue // as an old export reads: session_life empty, no session_ttl
		}
		g.SessionTTL = results.DeclaredTTL(ttl, mode)
		if g.Name != "probe" {
			continue
		}
		h := metrics.NewHistogram()
		for _, l := range lives {
			if err := h.RecordValue(l.Microseconds()); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := results.HistogramOf(h)
		if err != nil {
			t.Fatal(err)
		}
		g.Histograms[gate.SessionLifeHist] = enc
	}
	if err := e.Tally(); err != nil {
		t.Fatal(err)
	}
	return results.Part{File: fmt.Sprintf("run-%d.json", seed), Export: resultstest.RoundTrip(t, e)}
}

func times(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d + time.Duration(i)*10*time.Millisecond
	}
	return out
}

// The rule on session_life.p10 (docs/gate.md, "Session life"), at its edges.
func TestSessionLifeRule(t *testing.T) {
	const s = time.Second
	starved := &generator.Report{Seconds: 10, Windows: 10, Starved: true, StarvedS: 8}
	bases := func(seed uint64, lives ...time.Duration) []results.Part {
		var out []results.Part
		for i := range 2 { // two runs: the rule's ratio and step widen with their spread
			out = append(out, lived(t, seed+uint64(i), 3*s, "", lives...))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		bases   []results.Part
		cur     results.Part
		starved bool
		verdict string
		note    string
	}{
		{"shorter, starved runner", bases(10, times(25, 3*s)...), lived(t, 1, 3*s, "", times(25, s)...), true,
			VerdictRegressed, "group probe: sessions now die after about 1.0 s (was 3.0 s; the workload declares 3 s)"},
		{"longer", bases(10, times(25, 3*s)...), lived(t, 1, 3*s, "", times(25, 6*s)...), false,
			VerdictRegressed, "sessions now live until about 6.0 s"},
		{"within the step", bases(10, times(25, 900*time.Millisecond)...), lived(t, 1, 3*s, "", times(25, 500*time.Millisecond)...), false,
			VerdictOK, "within the bound"},
		{"no deaths anywhere", bases(10, []time.Duration{}...), lived(t, 1, 3*s, "", []time.Duration{}...), false, VerdictSame, ""},
		{"one death now", bases(10, []time.Duration{}...), lived(t, 1, 3*s, "", s), false, VerdictMissing, "no value in base"},
		{"one death each", bases(10, 3*s), lived(t, 1, 3*s, "", s), false, VerdictInfo, "too few sessions answered dead"},
		{"deaths now only", bases(10, []time.Duration{}...), lived(t, 1, 3*s, "", times(25, 2*s)...), false,
			VerdictRegressed, "sessions now die after about 2.0 s (none died before; the workload declares 3 s)"},
		{"deaths now only, past the declared TTL", bases(10, []time.Duration{}...), lived(t, 1, 3*s, "", times(25, 4*s)...), false,
			VerdictMissing, "no value in base"},
		{"absolute", []results.Part{lived(t, 10, 3*s, "absolute", times(25, 3*s)...)}, lived(t, 1, 3*s, "absolute", times(25, s)...), false,
			VerdictRegressed, "the workload declares 3 s, absolute"},
		{"old baselines", bases(10, nil...), lived(t, 1, 3*s, "", times(25, s)...), false, VerdictMissing, "no value in base"},
		{"old current", bases(10, times(25, 3*s)...), lived(t, 1, 3*s, "", nil...), false, VerdictMissing, "no value in current"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.starved {
				tc.cur.Export.Generator = starved
			}
			c := Baseline(tc.bases, tc.cur, gate.DefaultTolerances())
			r := row(c, "probe", lifeMetric)
			if r.Verdict != tc.verdict || !strings.Contains(r.Note, tc.note) {
				t.Fatalf("%s: %s (%s), want %s (…%s…)", lifeMetric, r.Verdict, r.Note, tc.verdict, tc.note)
			}
			if tc.verdict == VerdictRegressed {
				if c.Outcome != OutcomeRegressed || !strings.Contains(strings.Join(c.Findings, "\n"), r.Note) {
					t.Errorf("outcome %s, findings %q: want regressed, with the row's sentence", c.Outcome, c.Findings)
				}
			}
			if r := row(c, "probe", gate.SessionLifeHist+".p50"); r.Verdict == VerdictRegressed {
				t.Errorf("session_life.p50 judged too: %s", r.Note)
			}
		})
	}
	// A refuted estimate withholds what was learnt from deaths, session_life among them.
	cur := lived(t, 1, 3*s, "", times(25, s)...)
	cur.Export.Run.Withhold("probe", results.EstimateRefuted, "session_life")
	c := Baseline(bases(10, times(25, 3*s)...), cur, gate.DefaultTolerances())
	if r := row(c, "probe", lifeMetric); r.Verdict != VerdictInfo || !strings.Contains(r.Note, "withheld (estimate refuted)") {
		t.Errorf("refuted estimate: %s (%s), want withheld", r.Verdict, r.Note)
	}
}
