package hlog_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results/hlog"
)

// The live logs stream into a hidden directory of their own; Finish puts every histogram's
// log where it belongs, readable, and leaves nothing else behind. Remove after a run that
// ended early leaves nothing at all.
func TestLiveFinishAndRemove(t *testing.T) {
	parent := t.TempDir()
	rec := metrics.NewRecorder("naive", "naive", 1)
	start := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	l, err := hlog.StartLive(parent, []*metrics.Recorder{rec}, start, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	rec.Record(metrics.ToolCallLatency, 0, 3*time.Millisecond)
	if err := l.Interval(start.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(start.Add(1500 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "r.hlog")
	if err := l.Finish(dir); err != nil {
		t.Fatal(err)
	}
	for _, h := range metrics.Hists() {
		lg, err := hlog.ReadFile(filepath.Join(dir, h.String()+".hlog"))
		if err != nil || lg.RunID != "run-1" {
			t.Fatalf("%s: %v, %+v", h, err, lg)
		}
	}
	if left, _ := os.ReadDir(parent); len(left) != 1 || left[0].Name() != "r.hlog" {
		t.Errorf("beside the logs: %v, want only r.hlog", left)
	}

	early, err := hlog.StartLive(parent, []*metrics.Recorder{rec}, start, "run-2")
	if err != nil {
		t.Fatal(err)
	}
	if err := early.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := early.Remove(); err != nil {
		t.Errorf("a second Remove: %v", err)
	}
	if left, _ := os.ReadDir(parent); len(left) != 1 {
		t.Errorf("after Remove: %v, want only r.hlog", left)
	}
}
