package results_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/resultstest"
)

func TestJudge(t *testing.T) {
	e := resultstest.Sample(t, 1, 1)
	e.Groups[1].Counters["misattributed_errors"] = 0
	e.Overall.Counters["misattributed_errors"] = e.Groups[0].Counters["misattributed_errors"]
	p99 := e.Groups[1].Histograms["probe_latency"].P99US
	mustParse := func(s string) gate.Threshold {
		th, err := gate.ParseThreshold(s)
		if err != nil {
			t.Fatal(err)
		}
		return th
	}
	for _, tc := range []struct {
		expr   string
		pass   bool
		actual string
	}{
		{"probe.misattributed_errors == 0", true, "0"},
		{"naive.misattributed_errors == 0", false, ""},
		{"overall.misattributed_errors > 0", true, ""},
		{"probe.probe_latency.p99 < 1ms", p99 < 1000, ""},
		{"probe.probe_latency.p99 < 10m", true, ""},
		{"probe.probe_latency.p99 <= " + strconv.FormatInt(p99, 10) + "us", true, ""},
		{"probe.probe_latency.p99 < " + strconv.FormatInt(p99, 10) + "us", false, ""},
		{"probe.probe_latency.count == 200", true, "200"},
		{"probe.probe_latency.p50 < 1s", true, ""},
		{"probe.probe_latency.p75 < 1s", true, ""}, // a percentile the summary does not hold: from the hdr
		{"nosuch.drops == 0", false, "no such group"},
		{"naive.false_healthy_seconds < 1.4s", false, "1.5s"},
		{"naive.false_healthy_seconds < 2", true, "1.5s"},
		{"naive.errors.reset == 1", true, "1"},
		{"overall.errors == 2", true, "2"},
	} {
		r := results.JudgeThreshold(mustParse(tc.expr), e)
		if r.Pass != tc.pass || (tc.actual != "" && r.Actual != tc.actual) {
			t.Errorf("%s: pass %v actual %q (%s), want pass %v actual %q", tc.expr, r.Pass, r.Actual, r.Reason, tc.pass, tc.actual)
		}
	}

	// A percentile of an empty histogram fails: a gate must not pass on nothing measured.
	empty := resultstest.Sample(t, 2, 1)
	for _, g := range []*results.Group{&empty.Groups[1]} {
		h := g.Histograms["probe_latency"]
		h.Count = 0
		g.Histograms["probe_latency"] = h
	}
	r := results.JudgeThreshold(mustParse("probe.probe_latency.p99 < 1h"), empty)
	if r.Pass || r.Actual != "no samples" || r.Value != nil {
		t.Errorf("empty histogram: %+v", r)
	}
}

// A ratio with nothing under it fails as no data, as a percentile of an empty histogram does.
func TestThresholdRatioOfNothing(t *testing.T) {
	e := resultstest.RoundTrip(t, resultstest.Sample(t, 1, 1))
	e.Group("probe").Counters["sessions_dead"] = 0
	e.Group("probe").RetryAmplification = 0
	th, err := gate.ParseThreshold("probe.retry_amplification < 2")
	if err != nil {
		t.Fatal(err)
	}
	if r := results.JudgeThreshold(th, e); r.Pass || r.Actual != "no data" || !strings.Contains(r.Reason, "no session died") {
		t.Errorf("retry_amplification of no dead session: %+v", r)
	}
}
