package results_test

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/resultstest"
)

func TestCSV(t *testing.T) {
	e := resultstest.RoundTrip(t, resultstest.Sample(t, 1, 1))
	var buf bytes.Buffer
	if err := results.WriteCSV(&buf, e); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 3*len(gate.MetricNames()); len(rows) != want {
		t.Fatalf("%d rows, want %d (header + 3 groups × %d metrics)", len(rows), want, len(gate.MetricNames()))
	}
	if strings.Join(rows[0], ",") != "group,policy,metric,value,unit,withheld" {
		t.Errorf("header %v", rows[0])
	}
	find := func(group, metric string) []string {
		for _, r := range rows {
			if r[0] == group && r[2] == metric {
				return r
			}
		}
		t.Fatalf("no row %s %s", group, metric)
		return nil
	}
	g := e.Groups[1]
	for _, tc := range []struct {
		group, metric, value, unit string
	}{
		{"probe", "misattributed_errors", strconv.FormatInt(g.Counters["misattributed_errors"], 10), "count"},
		{"probe", "probe_latency.p99", strconv.FormatInt(g.Histograms["probe_latency"].P99US, 10), "us"},
		{"probe", "false_healthy_seconds", "1.5", "s"}, // the name says seconds
		{"overall", "drops", strconv.FormatInt(e.Overall.Counters["drops"], 10), "count"},
		{"naive", "retry_amplification", strconv.FormatFloat(e.Groups[0].RetryAmplification, 'f', 4, 64), "ratio"},
		{"naive", "errors.reset", "1", "count"},
	} {
		r := find(tc.group, tc.metric)
		if r[3] != tc.value || r[4] != tc.unit {
			t.Errorf("%s %s: %v, want value %s unit %s", tc.group, tc.metric, r, tc.value, tc.unit)
		}
	}
}

// The .hgrm layout is HdrHistogram's: a header, value/percentile/count/1/(1-p) rows in
// milliseconds, and the #[Mean ...] footer the plotter reads.
func TestHGRM(t *testing.T) {
	e := resultstest.Sample(t, 1, 1)
	h := e.Groups[0].Histograms["tool_call_latency"]
	var buf bytes.Buffer
	if err := results.WriteHGRM(&buf, h); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	sc.Scan()
	if got := sc.Text(); got != " Value\tPercentile\tTotalCount\t1/(1-Percentile)" {
		t.Errorf("header %q", got)
	}
	var lastValue, lastPct float64
	var rows int
	var footer []string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#[") {
			footer = append(footer, line)
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("row %q", line)
		}
		v, _ := strconv.ParseFloat(f[0], 64)
		p, _ := strconv.ParseFloat(f[1], 64)
		if v < lastValue || p < lastPct {
			t.Fatalf("rows not increasing at %q", line)
		}
		lastValue, lastPct = v, p
		rows++
	}
	if rows < 10 || lastPct != 1 {
		t.Errorf("%d rows, last percentile %v", rows, lastPct)
	}
	if want := float64(h.MaxUS) / 1000; lastValue != want {
		t.Errorf("last value %v ms, want the max %v ms", lastValue, want)
	}
	if len(footer) != 3 || !strings.Contains(footer[1], "Total count    =          200") {
		t.Errorf("footer %q", footer)
	}
}

func TestJUnit(t *testing.T) {
	e := resultstest.Sample(t, 1, 1)
	e.Thresholds = []results.ThresholdResult{
		{Expr: "probe.misattributed_errors == 0", Pass: true, Actual: "0"},
		{Expr: "naive.misattributed_errors == 0", Pass: false, Actual: "50", AbortedRun: true},
		{Expr: "probe.probe_latency.p99 < 1ms", Pass: false, Actual: "no samples", Reason: "no samples"},
	}
	e.Run.Interrupted = true
	e.Run.ID, e.Run.Labels = "0badcafe", map[string]string{"release": "1.2.3", "commit": "abc"}
	var buf bytes.Buffer
	if err := results.WriteJUnit(&buf, e); err != nil {
		t.Fatal(err)
	}
	var doc results.JUnitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	if doc.Tests != 4 || doc.Failures != 3 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 4 {
		t.Fatalf("suite %+v", doc)
	}
	for _, want := range []string{`<property name="run_id" value="0badcafe"></property>`, `<property name="label.commit" value="abc"></property>`, `<property name="label.release" value="1.2.3"></property>`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("JUnit lacks %s:\n%s", want, buf.String())
		}
	}
	cases := doc.Suites[0].Cases
	if cases[0].Failure != nil || cases[1].Failure == nil || !strings.Contains(cases[1].Failure.Message, "actual 50; it aborted the run") {
		t.Errorf("cases %+v", cases)
	}
	if cases[3].Name != "run completed as planned" || cases[3].Failure == nil || !strings.Contains(cases[3].Failure.Message, "interrupted") {
		t.Errorf("run case %+v", cases[3])
	}
	if cases[1].Classname != "mcpchaos.w" {
		t.Errorf("classname %q", cases[1].Classname)
	}
}

func TestWriteCompanions(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "run-1.json")
	written, err := results.WriteCompanions(jsonPath, resultstest.Sample(t, 1, 1), results.Formats)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 3 {
		t.Errorf("written %v", written)
	}
	for _, p := range []string{"run-1.csv", "run-1.junit.xml", "run-1.hgrm/probe.probe_latency.hgrm", "run-1.hgrm/overall.detection_delay.hgrm"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Error(err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "run-1.hgrm"))
	if want := 3 * len(metrics.Hists()); len(entries) != want {
		t.Errorf("%d hgrm files, want 3 groups × %d histograms", len(entries), len(metrics.Hists()))
	}
	if _, err := results.WriteCompanions(jsonPath, resultstest.Sample(t, 1, 1), []string{"pdf"}); err == nil || !strings.Contains(err.Error(), `unknown export format "pdf"`) {
		t.Errorf("pdf: %v", err)
	}
}

// A figure the run withheld is written with no value and its reason in the CSV, and a
// threshold on it is not judged (neither passed nor failed on a number the server did not
// produce), whichever group the threshold scopes.
func TestWithheldFigureIsNeitherWrittenNorJudged(t *testing.T) {
	e := resultstest.RoundTrip(t, resultstest.Sample(t, 1, 1))
	e.Run.Withhold("probe", results.ServesAnyID, "false_healthy_seconds", "detection_delay")
	var buf bytes.Buffer
	if err := results.WriteCSV(&buf, e); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range rows[1:] {
		withheld := r[0] == "probe" && (r[2] == "false_healthy_seconds" || strings.HasPrefix(r[2], "detection_delay."))
		withheld = withheld || r[0] == "overall" && (r[2] == "false_healthy_seconds" || strings.HasPrefix(r[2], "detection_delay."))
		switch {
		case withheld && (r[3] != "" || r[5] != results.ServesAnyID):
			t.Errorf("row %v: want no value and withheld %q", r, results.ServesAnyID)
		case !withheld && r[5] != "":
			t.Errorf("row %v: withheld, want it written", r)
		case withheld:
			seen++
		}
	}
	if seen == 0 {
		t.Fatal("no withheld row written")
	}
	for _, expr := range []string{"probe.false_healthy_seconds <= 100", "probe.detection_delay.p99 < 1h", "overall.false_healthy_seconds <= 100"} {
		th, err := gate.ParseThreshold(expr)
		if err != nil {
			t.Fatal(err)
		}
		r := results.JudgeThreshold(th, e)
		if r.Pass || r.Value != nil || !strings.Contains(r.Actual, results.ServesAnyID) {
			t.Errorf("%s: %+v, want not judged, withheld (%s)", expr, r, results.ServesAnyID)
		}
	}
	th, _ := gate.ParseThreshold("naive.false_healthy_seconds <= 100")
	if r := results.JudgeThreshold(th, e); r.Value == nil {
		t.Errorf("naive's figure is not withheld, yet not judged: %+v", r)
	}
}
