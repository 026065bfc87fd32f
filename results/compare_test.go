package results

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestCompareWithItself(t *testing.T) {
	e := roundTrip(t, sample(t, 1, 1))
	e.Thresholds = []ThresholdResult{{Expr: "probe.drops < 100", Pass: true}}
	c := Compare(Part{"a.json", e}, Part{"a.json", e}, DefaultTolerances())
	if c.Regressions != 0 || c.Improvements != 0 {
		t.Errorf("%d regressions, %d improvements comparing a run with itself", c.Regressions, c.Improvements)
	}
	for _, r := range c.Rows {
		if r.Verdict != VerdictSame {
			t.Errorf("%s %s: %s", r.Group, r.Metric, r.Verdict)
		}
	}
	if want := 3*len(MetricNames()) + 1; len(c.Rows) != want {
		t.Errorf("%d rows, want %d", len(c.Rows), want)
	}
	var buf bytes.Buffer
	WriteComparison(&buf, c, false)
	if !strings.Contains(buf.String(), "no change in any of") {
		t.Errorf("table:\n%s", buf.String())
	}
}

func TestCompareFindsRegressions(t *testing.T) {
	base := roundTrip(t, sample(t, 1, 1))
	cur := roundTrip(t, sample(t, 1, 1))
	edit := func(g *Group, metric string, v int64) { g.Counters[metric] = v }
	probe := cur.Group("probe")
	edit(probe, "misattributed_errors", probe.Counters["misattributed_errors"]+1) // may not grow at all
	edit(probe, "tool_calls_ok", probe.Counters["tool_calls_ok"]*2)               // better
	naive := cur.Group("naive")
	edit(naive, "drops", naive.Counters["drops"]*10) // info
	h := probe.Histograms["probe_latency"]
	h.P50US = base.Group("probe").Histograms["probe_latency"].P50US*2 + 2000 // +100% and > 1ms
	h.P99US = base.Group("probe").Histograms["probe_latency"].P99US * 2      // but 200 samples say little of a p99
	probe.Histograms["probe_latency"] = h
	h = naive.Histograms["probe_latency"]
	h.P50US += 5 // within the 1ms floor
	naive.Histograms["probe_latency"] = h
	base.Thresholds = []ThresholdResult{{Expr: "probe.misattributed_errors == 0", Pass: true}}
	cur.Thresholds = []ThresholdResult{{Expr: "probe.misattributed_errors == 0", Pass: false, Actual: "1"}}

	c := Compare(Part{"base.json", base}, Part{"cur.json", cur}, DefaultTolerances())
	verdict := func(group, metric string) string {
		for _, r := range c.Rows {
			if r.Group == group && r.Metric == metric {
				return r.Verdict
			}
		}
		return "missing"
	}
	for _, tc := range []struct{ group, metric, want string }{
		{"probe", "misattributed_errors", VerdictRegressed},
		{"probe", "tool_calls_ok", VerdictImproved},
		{"naive", "drops", VerdictInfo},
		{"probe", "probe_latency.p50", VerdictRegressed},
		{"probe", "probe_latency.p99", VerdictInfo},
		{"naive", "probe_latency.p50", VerdictOK},
		{"naive", "misattributed_errors", VerdictSame},
		{"threshold", "probe.misattributed_errors == 0", VerdictRegressed},
	} {
		if got := verdict(tc.group, tc.metric); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.group, tc.metric, got, tc.want)
		}
	}
	for _, r := range c.Rows {
		if r.Group == "probe" && r.Metric == "probe_latency.p99" && r.Note != "too few samples to judge (200; probe_latency.p99 needs 1000)" {
			t.Errorf("p99 of 200 samples: note %q", r.Note)
		}
	}
	if c.Regressions != 3 || c.Improvements != 1 {
		t.Errorf("%d regressions, %d improvements", c.Regressions, c.Improvements)
	}
	var buf bytes.Buffer
	WriteComparison(&buf, c, false)
	out := buf.String()
	for _, want := range []string{`(?m)^probe +misattributed_errors +8 +9 +\+1 \(\+12\.5%\) +REGRESSED \(may not grow\)$`, "(?m)^3 regressions, 1 improvement;"} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`naive +misattributed_errors`).MatchString(out) {
		t.Errorf("table lists unchanged rows:\n%s", out)
	}
	buf.Reset()
	WriteComparisonMarkdown(&buf, c, false)
	md := buf.String()
	for _, want := range []string{"### mcpchaos compare: 3 regressions", "#### Regressions", "| probe | `misattributed_errors` |", "**REGRESSED (may not grow)**", "<details>"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestTolerances(t *testing.T) {
	for _, tc := range []struct {
		pattern, spec string
		want          Tolerance
		canon         string
	}{
		{"probe_latency.p99", "+20%", Tolerance{Sign: 1, Rel: 0.2}, "probe_latency.p99"},
		{"probe_latency.p999", "10%,+2ms", Tolerance{Sign: 1, Rel: 0.1, Abs: 2000}, "probe_latency.p99.9"},
		{"naive.misattributed_errors", "0", Tolerance{Sign: 1}, "naive.misattributed_errors"},
		{"tool_calls_ok", "-5%", Tolerance{Sign: -1, Rel: 0.05}, "tool_calls_ok"},
		{"drops", "+3", Tolerance{Sign: 1, Abs: 3}, "drops"},
		{"*_latency.p99", "info", Tolerance{}, "*_latency.p99"},
		{"false_healthy_seconds", "+1s", Tolerance{Sign: 1, Abs: 1e6}, "false_healthy_seconds"},
	} {
		r, err := ParseToleranceRule(tc.pattern, tc.spec)
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
		if _, err := ParseToleranceRule(tc.pattern, tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: %v, want %q", tc.pattern, tc.spec, err, tc.want)
		}
	}
	// The last matching rule wins: defaults, then a file, then flags.
	ts := DefaultTolerances()
	r1, _ := ParseToleranceRule("*_latency.p99", "+50%")
	r2, _ := ParseToleranceRule("probe.probe_latency.p99", "info")
	ts = append(ts, r1, r2)
	if got := ts.For("naive", "tool_call_latency.p99"); got != (Tolerance{Sign: 1, Rel: 0.5}) {
		t.Errorf("glob rule: %+v", got)
	}
	if got := ts.For("probe", "probe_latency.p99"); !got.Info() {
		t.Errorf("group rule: %+v", got)
	}
	if got := ts.For("naive", "misattributed_errors"); got != (Tolerance{Sign: 1}) {
		t.Errorf("default: %+v", got)
	}
	if got := ts.For("naive", "sessions_started"); !got.Info() {
		t.Errorf("default info: %+v", got)
	}
}

func TestComparable(t *testing.T) {
	a, b := sample(t, 1, 1), sample(t, 2, 1)
	if err := Comparable(Part{"a", a}, Part{"b", b}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(e *Export)
		want string
	}{
		{func(e *Export) { e.Run.Workload = "other" }, `a ran workload "w" and b ran "other"`},
		{func(e *Export) { e.Run.WorkloadHash = "sha256:zzz" }, "the workload changed between them"},
		{func(e *Export) { e.Run.Shard = &Shard{Index: 0, Count: 2} }, "a is a whole run and b is shard 0/2"},
	} {
		b := sample(t, 2, 1)
		tc.edit(b)
		err := Comparable(Part{"a", a}, Part{"b", b})
		var me *MismatchError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
