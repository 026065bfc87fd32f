package report

import (
	"bytes"
	"fmt"
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
		rec := metrics.NewRecorder(g, g, 25)
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
		"No samples: reconnect_latency, refusal_duration, detection_delay",
		`<code>probe.misattributed_errors == 0</code></td><td>3</td><td><span class="fail">FAIL`,
		"Verdict: <span class=\"fail\">regressed: 1 threshold failed", // the verdict first, in compare's word
		"Run #1: demo, 2026-01-02 03:04:05Z",                          // oldest first
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	runsTable := html[strings.Index(html, "<h2>Runs</h2>"):]
	if i, j := strings.Index(runsTable, "<code>a.json</code>"), strings.Index(runsTable, "<code>b.json</code>"); i < 0 || j < i {
		t.Error("runs are not oldest first")
	}
	if v, d := strings.Index(html, "Verdict:"), strings.Index(html, "<h2>Runs</h2>"); v < 0 || v > d {
		t.Error("the verdict does not open the report")
	}
}

// A history with a failed and an interrupted run: they are marked, never drawn as zeros; the
// trend axis carries the runs' labels; phases are bands; the verdict names what is wrong.
func TestReportHistoryWithBadRuns(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var runs []Run
	for i := range 5 {
		e := export(t, uint64(i), start.Add(time.Duration(i)*time.Hour))
		e.Thresholds = nil
		e.Run.Labels = map[string]string{"release": fmt.Sprintf("v1.%d", i)}
		e.Phases = []results.PhaseAt{{Phase: "active", StartS: 0, EndS: 1}, {Phase: "quiet", StartS: 1, EndS: 7.5}, {Phase: "after-ttl", StartS: 7.5, EndS: 10}}
		runs = append(runs, Run{File: fmt.Sprintf("r%d.json", i), Export: e})
	}
	failed, interrupted := runs[2].Export, runs[3].Export
	failed.Run.Error = "could not start: connection refused"
	for gi := range failed.Groups {
		failed.Groups[gi].Counters = map[string]int64{} // every counter 0, as such a run's export says
	}
	interrupted.Run.Interrupted = true
	var buf bytes.Buffer
	if err := Write(&buf, runs, Options{Generated: start}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{
		"#3 r2.json: error: could not start: connection refused",
		"#4 r3.json: interrupted",
		">failed</text>", ">interrupted</text>", // marked in the trends
		"#2 v1.1", // labels on the trend axis
		"release=v1.4",
		">quiet</text>", ">after-ttl</text>", // phase bands
		"against the 2 earlier good runs", // r2 and r3 are no baseline
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// The failed run's zeros are not drawn: every trend line breaks at run #3 and #4 (x of run
	// n is at a fixed position), so no polyline point sits at those x positions.
	c := &chart{Width: 640, XMin: 0.5, XMax: 5.5}
	for _, n := range []float64{3, 4} {
		x := f1(c.xPos(n)) + ","
		for _, pl := range regexp.MustCompile(`points="[^"]*"`).FindAllString(html, -1) {
			if strings.Contains(pl, " "+x) || strings.Contains(pl, `"`+x) {
				if strings.Contains(html, "across runs") {
					t.Errorf("run #%v drawn in a trend line: %s", n, pl)
					break
				}
			}
		}
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

// The banner says compare's word: a latest run that did not complete could not run.
func TestReportVerdictCouldNotRun(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	last := export(t, 2, start.Add(time.Hour))
	last.Run.Error = "could not start: connection refused"
	runs := []Run{{File: "a.json", Export: export(t, 1, start)}, {File: "b.json", Export: last}}
	var buf bytes.Buffer
	if err := Write(&buf, runs, Options{Generated: start}); err != nil {
		t.Fatal(err)
	}
	if want := `Verdict: <span class="fail">could not run: the latest run did not complete`; !strings.Contains(buf.String(), want) {
		t.Errorf("the report lacks %q", want)
	}
}
