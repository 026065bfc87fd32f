package hlog_test

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results/hlog"
)

// Intervals written a second apart read back with the library's reader: each group's lines
// add up to its histogram's total, each line's count is what was recorded in that second, and
// the times are seconds since the run's start.
func TestWriteReadBack(t *testing.T) {
	naive := metrics.NewRecorder("naive", "naive", 2)
	probe := metrics.NewRecorder("probe", "probe", 2)
	recs := []*metrics.Recorder{naive, probe}
	bufs := make([]bytes.Buffer, len(metrics.Hists()))
	outs := make([]io.Writer, len(bufs))
	for i := range bufs {
		outs[i] = &bufs[i]
	}
	start := time.Date(2026, 12, 3, 7, 0, 0, 250e6, time.UTC)
	w, err := hlog.NewWriter(outs, recs, start, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Interval(start); err != nil { // the tick at the start: nothing to write yet
		t.Fatal(err)
	}
	perSecond := []int{3, 0, 5} // tool calls recorded by naive in seconds 0, 1, 2
	for s, n := range perSecond {
		for k := range n {
			naive.Record(metrics.ToolCallLatency, k, time.Duration(k+1)*time.Millisecond)
		}
		probe.Record(metrics.ProbeLatency, s, 20*time.Millisecond)
		if s < len(perSecond)-1 {
			if err := w.Interval(start.Add(time.Duration(s+1) * time.Second)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(start.Add(2500 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	tool := bufs[metrics.ToolCallLatency].String()
	for _, want := range []string{"#[Histogram log format version 1.3]", "#[StartTime: ", "#[BaseTime: ", "Tag=naive,", "Tag=probe,"} {
		if !strings.Contains(tool, want) {
			t.Errorf("the log lacks %q:\n%s", want, tool)
		}
	}
	l, err := hlog.Read(strings.NewReader(tool))
	if err != nil {
		t.Fatal(err)
	}
	if l.RunID != "run-1" {
		t.Errorf("run id %q, want run-1", l.RunID)
	}
	var naiveCounts []int64
	var lastEnd float64
	for _, iv := range l.Intervals {
		if iv.Group == "naive" {
			naiveCounts = append(naiveCounts, iv.Hist.TotalCount())
			if iv.StartS < lastEnd-1e-9 || iv.EndS <= iv.StartS {
				t.Errorf("interval [%v, %v) after one ending at %v", iv.StartS, iv.EndS, lastEnd)
			}
			lastEnd = iv.EndS
		}
	}
	if want := []int64{3, 0, 5}; !equal(naiveCounts, want) {
		t.Errorf("naive intervals' counts %v, want %v", naiveCounts, want)
	}
	if lastEnd != 2.5 || l.Intervals[0].StartS != 0 {
		t.Errorf("the intervals span [%v, %v], want [0, 2.5] seconds since the start", l.Intervals[0].StartS, lastEnd)
	}
	probeLog, err := hlog.Read(strings.NewReader(bufs[metrics.ProbeLatency].String()))
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, iv := range probeLog.Intervals {
		if iv.Group == "probe" {
			sum += iv.Hist.TotalCount()
		}
	}
	if want := probe.Snapshot().Hists[metrics.ProbeLatency].TotalCount(); sum != want {
		t.Errorf("probe intervals add up to %d, the histogram holds %d", sum, want)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReadRefusesDamage(t *testing.T) {
	for _, in := range []string{
		"#[mcpchaos run_id: x start_ms: notanumber]\n",
		"Tag=a,0.000,1.000,0.0,HISTFAAAAnotbase64!!\n",
	} {
		if _, err := hlog.Read(strings.NewReader(in)); err == nil {
			t.Errorf("%q read without an error", in)
		}
	}
}
