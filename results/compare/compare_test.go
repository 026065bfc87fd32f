package compare

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/generator"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/resultstest"
)

func TestCompareWithItself(t *testing.T) {
	e := resultstest.RoundTrip(t, resultstest.Sample(t, 1, 1))
	e.Thresholds = []results.ThresholdResult{{Expr: "probe.drops < 100", Pass: true}}
	c := Compare(results.Part{File: "a.json", Export: e}, results.Part{File: "a.json", Export: e}, gate.DefaultTolerances())
	if c.Regressions != 0 || c.Improvements != 0 {
		t.Errorf("%d regressions, %d improvements comparing a run with itself", c.Regressions, c.Improvements)
	}
	for _, r := range c.Rows {
		if r.Verdict != VerdictSame {
			t.Errorf("%s %s: %s", r.Group, r.Metric, r.Verdict)
		}
	}
	if want := 3*len(gate.MetricNames()) + 1; len(c.Rows) != want {
		t.Errorf("%d rows, want %d", len(c.Rows), want)
	}
	var buf bytes.Buffer
	Write(&buf, c, false)
	if !strings.Contains(buf.String(), "no change in any of") {
		t.Errorf("table:\n%s", buf.String())
	}
}

func TestCompareFindsRegressions(t *testing.T) {
	base := resultstest.RoundTrip(t, resultstest.Sample(t, 1, 1))
	cur := resultstest.RoundTrip(t, resultstest.Sample(t, 1, 1))
	edit := func(g *results.Group, metric string, v int64) { g.Counters[metric] = v }
	probe := cur.Group("probe")
	edit(probe, "misattributed_errors", probe.Counters["misattributed_errors"]+1) // may not grow at all
	edit(probe, "tool_calls_ok", probe.Counters["tool_calls_ok"]*2+50)            // better, past its counting noise
	naive := cur.Group("naive")
	edit(naive, "drops", naive.Counters["drops"]*10) // info
	base.Thresholds = []results.ThresholdResult{{Expr: "probe.misattributed_errors == 0", Pass: true}}
	cur.Thresholds = []results.ThresholdResult{{Expr: "probe.misattributed_errors == 0", Pass: false, Actual: "1"}}
	slower := resultstest.RoundTrip(t, resultstest.SampleSlower(t, 1, 1, 3))
	for _, g := range []string{"probe", "naive"} {
		cur.Group(g).Histograms = slower.Group(g).Histograms
	}

	c := Compare(results.Part{File: "base.json", Export: base}, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	for _, tc := range []struct{ group, metric, want, note string }{
		{"probe", "misattributed_errors", VerdictRegressed, ""},
		{"probe", "tool_calls_ok", VerdictImproved, ""},
		{"naive", "drops", VerdictInfo, ""},
		// one baseline cannot say how far latency moves between identical runs
		{"probe", "probe_latency.p50", VerdictInfo, "not judged: latency moves between identical runs by more than one run shows; give 3 or more baselines"},
		{"naive", "misattributed_errors", VerdictSame, ""},
		{"threshold", "probe.misattributed_errors == 0", VerdictRegressed, "now fails: 1"},
	} {
		r := row(c, tc.group, tc.metric)
		if r.Verdict != tc.want || (tc.note != "" && r.Note != tc.note) {
			t.Errorf("%s %s: %s (%q), want %s (%q)", tc.group, tc.metric, r.Verdict, r.Note, tc.want, tc.note)
		}
	}
	if c.Regressions != 2 || c.Improvements != 1 {
		t.Errorf("%d regressions, %d improvements", c.Regressions, c.Improvements)
	}
	var buf bytes.Buffer
	Write(&buf, c, false)
	out := buf.String()
	for _, want := range []string{`(?m)^probe +misattributed_errors +[0-9]+ +[0-9]+ +\+1 \(\+[0-9.]+%\) +REGRESSED \(may not grow\)$`, "(?m)^2 regressions, 1 improvement;"} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`naive +misattributed_errors`).MatchString(out) {
		t.Errorf("table lists unchanged rows:\n%s", out)
	}
	buf.Reset()
	WriteMarkdown(&buf, c, false)
	md := buf.String()
	for _, want := range []string{"### mcpchaos compare: Regressed (2 regressions)", "> **the current run failed 1 of its own 1 thresholds", "- group probe now blames tools for session deaths (misattributed_errors", "| probe | `misattributed_errors` |", "**REGRESSED (may not grow)**"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func row(c *Comparison, group, metric string) Row {
	for _, r := range c.Rows {
		if r.Group == group && r.Metric == metric {
			return r
		}
	}
	return Row{Verdict: "missing"}
}

// baseline is n exports of the same distribution (different seeds), as back-to-back runs.
func baseline(t *testing.T, n int) []results.Part {
	var ps []results.Part
	for i := range n {
		ps = append(ps, results.Part{File: fmt.Sprintf("base-%d.json", i), Export: resultstest.RoundTrip(t, resultstest.Sample(t, uint64(100+i), 1))})
	}
	return ps
}

// Latencies are judged from the full histograms against several baselines: the same
// distribution drawn again is no regression, three times slower is one.
func TestCompareBaselineLatency(t *testing.T) {
	bases := baseline(t, 5)
	same := results.Part{File: "same.json", Export: resultstest.RoundTrip(t, resultstest.Sample(t, 7, 1))}
	c := Baseline(bases, same, gate.DefaultTolerances())
	for _, r := range c.Rows {
		if strings.Contains(r.Metric, "latency") || strings.Contains(r.Metric, "delay") {
			if r.Verdict == VerdictRegressed || r.Verdict == VerdictImproved {
				t.Errorf("same distribution: %s %s %s (%s)", r.Group, r.Metric, r.Verdict, r.Note)
			}
		}
	}
	slow := results.Part{File: "slow.json", Export: resultstest.RoundTrip(t, resultstest.SampleSlower(t, 7, 1, 3))}
	c = Baseline(bases, slow, gate.DefaultTolerances())
	for _, m := range []string{"tool_call_latency.p50", "tool_call_latency.mean", "tool_call_latency.p90"} {
		if r := row(c, "probe", m); r.Verdict != VerdictRegressed || !strings.Contains(r.Note, "past the worst of 5 baselines") {
			t.Errorf("3x slower: probe %s %s (%s), want regressed", m, r.Verdict, r.Note)
		}
	}
	// probes come in a burst after a fault: one draw per run, so 3x is within its spread
	if r := row(c, "probe", "probe_latency.p50"); r.Verdict != VerdictNoise || !strings.Contains(r.Note, "margin x3.00") {
		t.Errorf("probe p50 3x slower: %s (%s), want noise", r.Verdict, r.Note)
	}
	c5 := Baseline(bases, results.Part{File: "slow.json", Export: resultstest.RoundTrip(t, resultstest.SampleSlower(t, 7, 1, 5))}, gate.DefaultTolerances())
	if r := row(c5, "probe", "probe_latency.p50"); r.Verdict != VerdictRegressed {
		t.Errorf("probe p50 5x slower: %s (%s), want regressed", r.Verdict, r.Note)
	}
	if r := row(c, "probe", "probe_latency.p99"); r.Verdict != VerdictInfo || !strings.Contains(r.Note, "too few samples") {
		t.Errorf("p99 of 200 samples: %s (%s), want info: too few samples", r.Verdict, r.Note)
	}
}

// Counters are judged against the baselines' spread: a value inside the range the baselines
// show is noise.
func TestCompareBaselineSpread(t *testing.T) {
	bases := baseline(t, 5)
	var lo, hi int64 = 1 << 62, 0
	for _, b := range bases {
		v := b.Export.Group("probe").Counters["dead_session_requests"]
		lo, hi = min(lo, v), max(hi, v)
	}
	cur := resultstest.RoundTrip(t, resultstest.Sample(t, 7, 1))
	for _, tc := range []struct {
		v    int64
		want string
	}{
		{hi, VerdictOK},                // inside the spread
		{hi + (hi - lo), VerdictNoise}, // past the +10%, within the baselines' range: never "ok"
		{hi + (hi-lo)*2 + 20, VerdictRegressed},
	} {
		cur.Group("probe").Counters["dead_session_requests"] = tc.v
		c := Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
		if r := row(c, "probe", "dead_session_requests"); r.Verdict != tc.want {
			t.Errorf("dead_session_requests %d against %d..%d: %s, want %s", tc.v, lo, hi, r.Verdict, tc.want)
		}
	}
}

// A control group's counters are judged for showing the hazard, not for their amount.
func TestCompareControlGroup(t *testing.T) {
	bases := baseline(t, 3)
	cur := resultstest.RoundTrip(t, resultstest.Sample(t, 7, 1))
	naive := cur.Group("naive")
	naive.Counters["misattributed_errors"] = 1000 // far more than any baseline: noise of the control
	c := Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	if r := row(c, "naive", "misattributed_errors"); r.Verdict != VerdictInfo || !strings.Contains(r.Note, "control group (naive)") {
		t.Errorf("control's amount: %s (%s), want info", r.Verdict, r.Note)
	}
	if r := row(c, "overall", "misattributed_errors"); r.Verdict != VerdictInfo || !strings.Contains(r.Note, "judged per group") {
		t.Errorf("overall with a control: %s (%s), want info", r.Verdict, r.Note)
	}
	for i, b := range bases { // every baseline showed at least 5
		b.Export.Group("naive").Counters["misattributed_errors"] = int64(5 + 10*i)
	}
	naive.Counters["misattributed_errors"] = 0 // the fault no longer reaches the control
	c = Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	if r := row(c, "naive", "misattributed_errors"); r.Verdict != VerdictRegressed || !strings.Contains(r.Note, "no longer shows the fault") {
		t.Errorf("control lost: %s (%s), want regressed", r.Verdict, r.Note)
	}
	bases[0].Export.Group("naive").Counters["misattributed_errors"] = 3 // a baseline showed it by a race
	c = Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	if r := row(c, "naive", "misattributed_errors"); r.Verdict != VerdictInfo {
		t.Errorf("control at 0 after a baseline's 3: %s (%s), want info", r.Verdict, r.Note)
	}
	for _, b := range bases { // the hazard appears where no baseline showed it
		b.Export.Group("naive").Counters["stale_events_applied"] = 0
	}
	naive.Counters["stale_events_applied"] = 5
	c = Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	if r := row(c, "naive", "stale_events_applied"); r.Verdict != VerdictRegressed || !strings.Contains(r.Note, "the hazard appeared") {
		t.Errorf("hazard appeared: %s (%s), want regressed", r.Verdict, r.Note)
	}

	// Re-init collisions are a race of the control's own calls: lost by a starved run, they
	// are inconclusive; lost by a run the runner kept up with, the control lost its power.
	for i, b := range bases {
		b.Export.Group("naive").Counters["reinit_collisions"] = int64(13 + 20*i)
	}
	naive.Counters["reinit_collisions"] = 0
	cur.Generator = &generator.Report{Seconds: 10, Windows: 10, Starved: true, StarvedS: 10}
	c = Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	if r := row(c, "naive", "reinit_collisions"); r.Verdict != VerdictInconclusive {
		t.Errorf("a starved control without re-init collisions: %s (%s), want inconclusive", r.Verdict, r.Note)
	}
	if r := row(c, "naive", "stale_events_applied"); r.Verdict != VerdictRegressed {
		t.Errorf("a starved control's stale events appeared: %s (%s), want regressed (not a race)", r.Verdict, r.Note)
	}
	cur.Generator = nil
	c = Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	if r := row(c, "naive", "reinit_collisions"); r.Verdict != VerdictRegressed {
		t.Errorf("a control without re-init collisions: %s (%s), want regressed", r.Verdict, r.Note)
	}
}

// A threshold that failed in some baselines is flaky there, not a regression now.
func TestCompareBaselineThresholds(t *testing.T) {
	bases := baseline(t, 3)
	for i, b := range bases {
		b.Export.Thresholds = []results.ThresholdResult{{Expr: "a", Pass: true}, {Expr: "b", Pass: i != 1}}
	}
	cur := resultstest.RoundTrip(t, resultstest.Sample(t, 7, 1))
	cur.Thresholds = []results.ThresholdResult{{Expr: "a", Pass: false, Actual: "3"}, {Expr: "b", Pass: false, Actual: "1"}}
	c := Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	if r := row(c, "threshold", "a"); r.Verdict != VerdictRegressed {
		t.Errorf("a: %s", r.Verdict)
	}
	if r := row(c, "threshold", "b"); r.Verdict != VerdictInfo || r.Note != "failed in 1 of 3 baselines: not judged" {
		t.Errorf("b: %s (%s)", r.Verdict, r.Note)
	}
}

func TestTolerances(t *testing.T) {
	for _, tc := range []struct {
		pattern, spec string
		want          gate.Tolerance
		canon         string
	}{
		{"probe_latency.p99", "+20%", gate.Tolerance{Sign: 1, Rel: 0.2}, "probe_latency.p99"},
		{"probe_latency.p999", "10%,+2ms", gate.Tolerance{Sign: 1, Rel: 0.1, Abs: 2000, AbsDuration: true}, "probe_latency.p99.9"},
		{"naive.misattributed_errors", "0", gate.Tolerance{Sign: 1}, "naive.misattributed_errors"},
		{"tool_calls_ok", "-5%", gate.Tolerance{Sign: -1, Rel: 0.05}, "tool_calls_ok"},
		{"drops", "+3", gate.Tolerance{Sign: 1, Abs: 3}, "drops"},
		{"*_latency.p99", "info", gate.Tolerance{}, "*_latency.p99"},
		{"false_healthy_seconds", "+1s", gate.Tolerance{Sign: 1, Abs: 1e6, AbsDuration: true}, "false_healthy_seconds"},
	} {
		r, err := gate.ParseToleranceRule(tc.pattern, tc.spec)
		if err != nil {
			t.Errorf("%s=%s: %v", tc.pattern, tc.spec, err)
			continue
		}
		if r.Tol != tc.want || r.Pattern != tc.canon {
			t.Errorf("%s=%s: %+v %q, want %+v %q", tc.pattern, tc.spec, r.Tol, r.Pattern, tc.want, tc.canon)
		}
	}
	for _, tc := range []struct{ pattern, spec, want string }{
		{"probe_latency.p99", "+10%,-1ms", "mixes + and -"},
		{"probe_latency.p99", "lots", "is neither a percentage"},
		{"probe_latency.p99", "+x%", "is not a percentage"},
		{"misatributed_errors", "0", `did you mean "misattributed_errors"`},
		{"", "0", "empty metric pattern"},
		{"[", "0", "syntax error in pattern"},
	} {
		if _, err := gate.ParseToleranceRule(tc.pattern, tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: %v, want %q", tc.pattern, tc.spec, err, tc.want)
		}
	}
	// The last matching rule wins: defaults, then a file, then flags.
	ts := gate.DefaultTolerances()
	r1, _ := gate.ParseToleranceRule("*_latency.p99", "+50%")
	r2, _ := gate.ParseToleranceRule("probe.probe_latency.p99", "info")
	ts = append(ts, r1, r2)
	if got := ts.For("naive", "tool_call_latency.p99"); got != (gate.Tolerance{Sign: 1, Rel: 0.5}) {
		t.Errorf("glob rule: %+v", got)
	}
	if got := ts.For("probe", "probe_latency.p99"); !got.Info() {
		t.Errorf("group rule: %+v", got)
	}
	if got := ts.For("naive", "misattributed_errors"); got != (gate.Tolerance{Sign: 1}) {
		t.Errorf("default: %+v", got)
	}
	if got := ts.For("naive", "sessions_started"); !got.Info() {
		t.Errorf("default info: %+v", got)
	}
}

func TestComparable(t *testing.T) {
	a, b := resultstest.Sample(t, 1, 1), resultstest.Sample(t, 2, 1)
	if err := Comparable(results.Part{File: "a", Export: a}, results.Part{File: "b", Export: b}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(e *results.Export)
		want string
	}{
		{func(e *results.Export) { e.Run.Workload = "other" }, `a ran workload "w" and b ran "other"`},
		{func(e *results.Export) { e.Run.WorkloadHash = "sha256:zzz" }, "the workload changed between them"},
		{func(e *results.Export) { e.Run.Shard = &results.Shard{Index: 0, Count: 2} }, "a is a whole run and b is shard 0/2"},
	} {
		b := resultstest.Sample(t, 2, 1)
		tc.edit(b)
		err := Comparable(results.Part{File: "a", Export: a}, results.Part{File: "b", Export: b})
		var me *results.MismatchError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// The runner's figures are never the server's regression: skipped turns are reported, a
// control group is judged only on hazards, and fewer calls made because turns were skipped is
// not fewer calls answered. A move past the tolerance is never printed "ok".
func TestCompareJudgesTheServerNotTheRunner(t *testing.T) {
	bases := baseline(t, 3)
	cur := resultstest.RoundTrip(t, resultstest.Sample(t, 7, 1))
	probe, naive := cur.Group("probe"), cur.Group("naive")
	probe.Counters["calls_skipped"] = 1000
	naive.Counters["calls_skipped"] = 1000
	naive.Errors["connect"] = 5000
	for i, b := range bases { // about 1000 calls answered, every turn taken
		b.Export.Group("probe").Counters["tool_calls_ok"] = int64(990 + 10*i)
		b.Export.Group("probe").Counters["calls_skipped"] = 0
	}
	probe.Counters["tool_calls_ok"] = 600 // 400 turns skipped by a stalled runner
	probe.Counters["calls_skipped"] = 400
	for _, e := range append([]*results.Export{cur}, bases[0].Export, bases[1].Export, bases[2].Export) {
		for _, h := range []string{"misattributed_errors", "stale_events_applied", "reinit_collisions", "retries_against_dead", "replayed_errors_delivered", "silent_substitutions",
			"hung_seconds", "calls_hung", "errors_misclassified", "listeners_silently_dead", "dead_session_background_requests", "sessions_dead"} {
			e.Group("probe").Counters[h] = 0 // the server did not change (the judged counters, not left to the seeded draw)
		}
		e.Group("probe").RetryAmplification = 1.5 // nor did the ratio (not left to the seeded draw)
	}
	c := Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	for _, tc := range []struct{ group, metric, verdict, note string }{
		{"probe", "calls_skipped", VerdictInfo, "load generator"},
		{"naive", "calls_skipped", VerdictInfo, "load generator"},
		{"naive", "errors.connect", VerdictInfo, "judged only on hazard outcomes"},
		{"probe", "tool_calls_ok", VerdictNoise, "skipped"},
		{"overall", "tool_calls_ok", VerdictInfo, "judged per group"},
	} {
		if r := row(c, tc.group, tc.metric); r.Verdict != tc.verdict || !strings.Contains(r.Note, tc.note) {
			t.Errorf("%s %s: %s (%s), want %s (…%s…)", tc.group, tc.metric, r.Verdict, r.Note, tc.verdict, tc.note)
		}
	}
	if c.Regressions != 0 {
		for _, r := range c.Rows {
			if r.Verdict == VerdictRegressed {
				t.Logf("%s %s %s", r.Group, r.Metric, r.Note)
			}
		}
		t.Errorf("%d regressions from the runner's figures", c.Regressions)
	}
	probe.Counters["calls_skipped"] = 0 // the same fall without skipped turns: the server answered fewer
	c = Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	if r := row(c, "probe", "tool_calls_ok"); r.Verdict != VerdictRegressed {
		t.Errorf("tool_calls_ok fell with no skipped turns: %s (%s)", r.Verdict, r.Note)
	}
	for _, r := range c.Rows {
		if r.Verdict == VerdictOK && r.Change != nil && r.Tolerance != "" && outsideTolerance(r) {
			t.Errorf("%s %s moved past its tolerance (%s) and is printed ok", r.Group, r.Metric, r.Tolerance)
		}
	}
}

// outsideTolerance reports whether a row's move past its worst baseline is larger than 10%
// and 1ms of it (the default latency tolerance), for latency rows.
func outsideTolerance(r Row) bool {
	if r.Class != gate.ClassLatency || r.BaseMax == nil {
		return false
	}
	over := *r.Current - *r.BaseMax
	return over > 1000 && over > 0.1**r.BaseMax
}

// A starved run's timing rows are inconclusive, never regressed nor ok; hazards that do not
// depend on timing stay judged.
func TestCompareStarvedIsInconclusive(t *testing.T) {
	floor := gate.FloorHist + "." + gate.FloorStat
	bases := baseline(t, 3)
	slow := resultstest.RoundTrip(t, resultstest.SampleSlower(t, 7, 1, 3))
	slow.Generator = &generator.Report{Seconds: 10, Windows: 10, Starved: true, StarvedS: 8,
		Starving: []generator.Window{{FromS: 1, ToS: 9, Why: "timer lag p99 40ms"}}}
	for _, e := range []*results.Export{slow, bases[0].Export, bases[1].Export, bases[2].Export} {
		for _, h := range []string{"misattributed_errors", "stale_events_applied", "reinit_collisions", "retries_against_dead"} {
			e.Group("probe").Counters[h] = 0
		}
	}
	slow.Group("probe").Counters["misattributed_errors"] = 1000
	for _, g := range []string{"probe", "naive"} { // the server's floor as in a baseline: judged, not moved
		slow.Group(g).Histograms[gate.FloorHist] = bases[0].Export.Group(g).Histograms[gate.FloorHist]
	}
	c := Baseline(bases, results.Part{File: "slow.json", Export: slow}, gate.DefaultTolerances())
	if r := row(c, "probe", "probe_latency.p50"); r.Verdict != VerdictInconclusive || !strings.Contains(r.Note, "the runner was starved (current starved 8.0s of 10.0s: timer lag p99 40ms)") {
		t.Errorf("latency of a starved run: %s (%s)", r.Verdict, r.Note)
	}
	if r := row(c, "probe", "misattributed_errors"); r.Verdict != VerdictRegressed {
		t.Errorf("a hazard of a starved run: %s (%s), want regressed", r.Verdict, r.Note)
	}
	if c.Inconclusive == 0 || c.Regressions != 1 || len(c.Starved) != 1 {
		t.Errorf("%d inconclusive, %d regressions, starved %v", c.Inconclusive, c.Regressions, c.Starved)
	}
	for _, r := range c.Rows {
		m, _ := gate.ParseMetric(r.Metric) // session_life is the server's clock: judged at any load
		if r.Class == gate.ClassLatency && r.Group == "probe" && r.Metric != floor && !m.SessionFact() && (r.Verdict == VerdictRegressed || r.Verdict == VerdictOK) {
			t.Errorf("%s %s of a starved run: %s", r.Group, r.Metric, r.Verdict)
		}
	}
	// A starved baseline makes the current run's timing inconclusive too.
	slow.Generator, bases[1].Export.Generator = nil, &generator.Report{Seconds: 10, Windows: 10, Starved: true, StarvedS: 5}
	c = Baseline(bases, results.Part{File: "slow.json", Export: slow}, gate.DefaultTolerances())
	if r := row(c, "probe", "probe_latency.p50"); r.Verdict != VerdictInconclusive || !strings.Contains(r.Note, "base-1.json starved") {
		t.Errorf("latency against a starved baseline: %s (%s)", r.Verdict, r.Note)
	}
	var buf bytes.Buffer
	Write(&buf, c, false)
	if !strings.Contains(buf.String(), "verdict: REGRESSED (1 regression)") || !strings.Contains(buf.String(), "inconclusive") {
		t.Errorf("text:\n%s", buf.String())
	}
}

// Session regressions are said in words that name what changed, not only metric ids.
func TestCompareFindingsInWords(t *testing.T) {
	set := func(e *results.Export, group string, kv map[string]int64) {
		for k, v := range kv {
			e.Group(group).Counters[k] = v
		}
	}
	clean := map[string]int64{"misattributed_errors": 0, "stale_events_applied": 0, "reinit_collisions": 0, "retries_against_dead": 0}
	for _, tc := range []struct {
		name      string
		base, cur map[string]map[string]int64
		want      string
	}{
		{"GET strict → permissive",
			map[string]map[string]int64{"naive": {"replays_ok": 0, "replays_dead": 50}},
			map[string]map[string]int64{"naive": {"replays_ok": 50, "replays_dead": 0, "misattributed_errors": 39, "stale_events_applied": 50}},
			"replays of dead sessions now answer 200 (the server's GET no longer validates the session): group naive now blames tools for session deaths (misattributed_errors 0 → 39)"},
		{"GET strict → permissive, the replay counts unmoved (a loaded runner)",
			map[string]map[string]int64{"naive": {"replays_ok": 20, "replays_dead": 20}},
			map[string]map[string]int64{"naive": {"replays_ok": 20, "replays_dead": 20, "stale_events_applied": 84}},
			"replays of dead sessions now answer 200 (the server's GET no longer validates the session): group naive now applies replayed events of dead sessions (stale_events_applied 0 → 84)"},
		{"probe policy off",
			map[string]map[string]int64{"probe": {"probes_sent": 50}},
			map[string]map[string]int64{"probe": {"probes_sent": 0, "stale_events_applied": 50}},
			"group probe no longer probes after a replay (its probe policy is off): it now applies replayed events of dead sessions (stale_events_applied 0 → 50)"},
		{"dead ids served 200",
			map[string]map[string]int64{"naive": {"sessions_dead": 25, "misattributed_errors": 39, "stale_events_applied": 50}},
			map[string]map[string]int64{"naive": {"sessions_dead": 0, "misattributed_errors": 0, "stale_events_applied": 0}},
			"requests on dead sessions now succeed (the server answers expired session ids with 200, or the fault was not injected): control group naive no longer runs into dead sessions"},
	} {
		bases := baseline(t, 3)
		cur := resultstest.RoundTrip(t, resultstest.Sample(t, 7, 1))
		for _, e := range []*results.Export{cur, bases[0].Export, bases[1].Export, bases[2].Export} {
			set(e, "naive", clean)
			set(e, "probe", clean)
		}
		for _, b := range bases {
			for g, kv := range tc.base {
				set(b.Export, g, kv)
			}
		}
		for g, kv := range tc.base {
			set(cur, g, kv)
		}
		for g, kv := range tc.cur {
			set(cur, g, kv)
		}
		c := Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
		var buf bytes.Buffer
		Write(&buf, c, false)
		if !strings.Contains(buf.String(), "what changed: "+tc.want) || c.Regressions == 0 {
			t.Errorf("%s: want %q in\n%s", tc.name, tc.want, buf.String())
		}
	}
}

// A latency growth that the runner's own timer lag growth explains is inconclusive; the same
// growth with the runner as quick as in the baselines is the server's.
func TestCompareLatencyExplainedByRunner(t *testing.T) {
	bases := baseline(t, 3)
	for _, b := range bases {
		b.Export.Generator = &generator.Report{Seconds: 10, Windows: 10, TimerLag: generator.Dist{Count: 100, P99US: 300}}
	}
	slow := resultstest.RoundTrip(t, resultstest.SampleSlower(t, 7, 1, 3))
	slow.Generator = &generator.Report{Seconds: 10, Windows: 10, TimerLag: generator.Dist{Count: 100, P99US: 300}}
	c := Baseline(bases, results.Part{File: "slow.json", Export: slow}, gate.DefaultTolerances())
	if r := row(c, "probe", "tool_call_latency.p50"); r.Verdict != VerdictRegressed {
		t.Errorf("3x slower, the runner as quick: %s (%s)", r.Verdict, r.Note)
	}
	slow.Generator.TimerLag.P99US = 200_000 // the runner's wake-ups came 200 ms late
	c = Baseline(bases, results.Part{File: "slow.json", Export: slow}, gate.DefaultTolerances())
	if r := row(c, "probe", "tool_call_latency.p50"); r.Verdict != VerdictInconclusive || !strings.Contains(r.Note, "timer lag (p99) grew by 199.7ms") {
		t.Errorf("3x slower, the runner 200ms late: %s (%s)", r.Verdict, r.Note)
	}
}

// Events quarantined where no baseline had any: the server's replays now lie, said in words
// even when the control group never got to show it.
func TestCompareLyingReplaysCaughtByProbes(t *testing.T) {
	bases := baseline(t, 3)
	for _, b := range bases {
		b.Export.Group("probe").Counters["events_quarantined"] = 0
	}
	cur := resultstest.RoundTrip(t, resultstest.Sample(t, 7, 1))
	cur.Group("probe").Counters["events_quarantined"] = 12
	c := Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	if r := row(c, "probe", "events_quarantined"); r.Verdict != VerdictRegressed {
		t.Errorf("quarantines appeared: %s (%s)", r.Verdict, r.Note)
	}
	want := "replays of dead sessions now answer 200 (the server's GET no longer validates the session): group probe's probes caught it (events_quarantined 0 → 12)"
	if !slices.Contains(c.Findings, want) {
		t.Errorf("findings %q lack %q", c.Findings, want)
	}
	cur.Group("probe").Counters["events_quarantined"] = 0
	for _, b := range bases {
		b.Export.Group("probe").Counters["events_quarantined"] = 30
	}
	c = Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	if r := row(c, "probe", "events_quarantined"); r.Verdict != VerdictInfo {
		t.Errorf("fewer quarantines: %s (%s), want info", r.Verdict, r.Note)
	}
}

// A current run whose sessions answered after their estimated death, where no baseline's did,
// meets a server that answers dead ids with 200: its figures are withheld, and the change is
// flagged in words instead of passing as "nothing judged changed".
func TestCompareRefutedEstimate(t *testing.T) {
	bases := baseline(t, 3)
	cur := resultstest.RoundTrip(t, resultstest.Sample(t, 7, 1))
	cur.Run.Withheld = map[string]map[string]string{"naive": {"sessions_dead": results.EstimateRefuted, "misattributed_errors": results.EstimateRefuted}}
	c := Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	if r := row(c, "naive", "sessions_served_past_death"); r.Verdict != VerdictRegressed {
		t.Errorf("refuted now, never before: %s (%s), want regressed", r.Verdict, r.Note)
	}
	if r := row(c, "naive", "misattributed_errors"); r.Verdict != VerdictInfo || !strings.Contains(r.Note, "withheld") {
		t.Errorf("a withheld figure: %s (%s), want info", r.Verdict, r.Note)
	}
	want := "requests on dead sessions now succeed (the server answers session ids past their declared TTL with 200"
	if !slices.ContainsFunc(c.Findings, func(f string) bool { return strings.HasPrefix(f, want) }) {
		t.Errorf("findings %q lack %q", c.Findings, want)
	}
	bases[1].Export.Run.Withheld = cur.Run.Withheld // a baseline refuted it too: the same server
	c = Baseline(bases, results.Part{File: "cur.json", Export: cur}, gate.DefaultTolerances())
	for _, r := range c.Rows {
		if r.Metric == "sessions_served_past_death" {
			t.Errorf("refuted in a baseline too: row %+v", r)
		}
	}
}
