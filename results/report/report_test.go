package report

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
)

func export(t *testing.T, seed uint64, start time.Time) *results.Export {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var snaps []*metrics.Snapshot
	for _, g := range []string{"naive", "probe"} {
		rec := metrics.NewGroup(g, g, 25)
		for _, c := range metrics.Counters() {
			rec.Add(c, int64(rng.IntN(50)))
		}
		for i := range 300 {
			rec.Record(metrics.ToolCallLatency, i, time.Duration(200+rng.ExpFloat64()*800)*time.Microsecond)
			if g == "probe" {
				rec.Record(metrics.ProbeLatency, i, time.Duration(100+rng.ExpFloat64()*300)*time.Microsecond)
			}
		}
		snaps = append(snaps, rec.Snapshot())
	}
	e, err := results.Build(results.Run{Tool: "mcpchaos", Workload: "demo", WorkloadHash: "sha256:1", Target: "builtin",
		Start: start, End: start.Add(10 * time.Second), PlannedSeconds: 10}, snaps)
	if err != nil {
		t.Fatal(err)
	}
	e.Faults = []results.FaultAt{
		{Fault: "lb-idle-timeout", Proxy: "naive", AddedAtS: 1.2, RemovedAtS: 1.6},
		{Fault: "proxy-restart", Proxy: "naive", AddedAtS: 1.8, RemovedAtS: 6},
		{Fault: "proxy-restart", Proxy: "probe", AddedAtS: 1.81, RemovedAtS: 6.01},
	}
	e.Thresholds = []results.ThresholdResult{{Expr: "probe.misattributed_errors == 0", Pass: false, Actual: "3"}}
	e.Timeline = &results.Timeline{IntervalS: 1}
	for k := range 11 {
		e.Timeline.Samples = append(e.Timeline.Samples, results.Sample{TS: float64(k), Groups: map[string]results.GroupSample{
			"naive": {States: map[string]int64{"live": int64(25 - k), "reconnecting": int64(k), results.StateBelievedLiveButDead: int64(k / 2)},
				Counters: map[string]int64{"misattributed_errors": int64(k * 5), "dead_session_requests": int64(k * 20)}},
			"probe": {States: map[string]int64{"live": 25}},
		}})
	}
	return e
}

var urlAttr = regexp.MustCompile(`(?i)(src|href|xlink:href|action)\s*=\s*["']?\s*(https?:)?//`)

func TestReportIsSelfContained(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	runs := []Run{
		{File: "b.json", Export: export(t, 2, start.Add(time.Hour))},
		{File: "a.json", Export: export(t, 1, start)},
	}
	var buf bytes.Buffer
	if err := Write(&buf, runs, Options{Generated: start}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	if m := urlAttr.FindString(html); m != "" {
		t.Errorf("the report refers to the network: %q", m)
	}
	for _, bad := range []string{"url(http", "url(//", "@import", "<script", "<link", "<iframe", "<img"} {
		if strings.Contains(strings.ToLower(html), bad) {
			t.Errorf("the report contains %q", bad)
		}
	}
	// Plots: per run 2 latency curves (tool_call, probe) + 2 timelines + 1 damage plot; 6 trends.
	if got, want := strings.Count(html, "<svg "), 2*5+6; got != want {
		t.Errorf("%d plots, want %d", got, want)
	}
	if strings.Count(html, "<svg ") != strings.Count(html, "</svg>") {
		t.Error("unbalanced <svg>")
	}
	for _, want := range []string{
		"Trends across runs", "misattributed_errors across runs",
		"tool_call_latency by percentile", "group naive: sessions by state",
		"fault proxy-restart", "believed live, in truth dead",
		"99.9%", // the percentile axis
		"No samples: reconnect_latency, detection_delay",
		`<code>probe.misattributed_errors == 0</code></td><td>3</td><td><span class="fail">FAIL`,
		"font/ttf;base64,",
		"Run #1: demo, 2026-01-02 03:04:05Z", // oldest first
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if i, j := strings.Index(html, "<code>a.json</code>"), strings.Index(html, "<code>b.json</code>"); i < 0 || j < i {
		t.Error("runs are not oldest first")
	}
}

func TestReportOfOneOldRun(t *testing.T) {
	e := export(t, 1, time.Now())
	e.Timeline, e.Thresholds, e.SchemaVersion = nil, nil, 1
	var buf bytes.Buffer
	if err := Write(&buf, []Run{{File: "old.json", Export: e}}, Options{}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{"This export has no timeline", "The workload sets no thresholds"} {
		if !strings.Contains(html, want) {
			t.Errorf("lacks %q", want)
		}
	}
	if strings.Contains(html, "Trends across runs") {
		t.Error("trends for one run")
	}
}
