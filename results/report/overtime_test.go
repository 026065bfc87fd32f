package report

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results/hlog"
)

// The report draws latency over time from the interval logs it is handed: a plot per
// histogram with samples, a p50 and a p99 line per group that has them, at each interval with
// a sample; without logs, a note says how to get them.
func TestLatencyOverTimeFromIntervalLogs(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := export(t, 1, start)
	naive := metrics.NewRecorder("naive", "naive", 1)
	bufs := make([]bytes.Buffer, len(metrics.Hists()))
	outs := make([]io.Writer, len(bufs))
	for i := range bufs {
		outs[i] = &bufs[i]
	}
	w, err := hlog.NewWriter(outs, []*metrics.Recorder{naive}, start, e.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for s := 1; s <= 4; s++ {
		if s != 3 { // second 3 records nothing: no point there
			naive.Record(metrics.ToolCallLatency, 0, time.Duration(s)*time.Millisecond)
		}
		if err := w.Interval(start.Add(time.Duration(s) * time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	logs := map[string]*hlog.Log{}
	for _, h := range metrics.Hists() {
		l, err := hlog.Read(strings.NewReader(bufs[h].String()))
		if err != nil {
			t.Fatal(err)
		}
		logs[h.String()] = l
	}
	var with, without bytes.Buffer
	if err := Write(&with, []Run{{File: "a.json", Export: e, Intervals: logs}}, Options{}); err != nil {
		t.Fatal(err)
	}
	html := with.String()
	if n := strings.Count(html[strings.Index(html, "<h3>Latency over time"):], "<svg"); n != 1 {
		t.Errorf("%d plots over time, want 1 (only tool_call_latency has samples)", n)
	}
	for _, want := range []string{"tool_call_latency over time", "naive p50", "naive p99", "fault proxy-restart"} {
		if !strings.Contains(html[strings.Index(html, "<h3>Latency over time"):], want) {
			t.Errorf("the latency over time section lacks %q", want)
		}
	}
	if strings.Contains(html[strings.Index(html, "<h3>Latency over time"):], "probe p50") {
		t.Error("a line for the probe group, which has no interval with a sample")
	}
	if err := Write(&without, []Run{{File: "a.json", Export: e}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(without.String(), "run with --hlog") || strings.Contains(without.String(), "over time (p50") {
		t.Error("without logs: want the note saying how to get them, and no plot")
	}
}
