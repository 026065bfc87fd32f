package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results/hlog"
)

// run --hlog writes one interval log per histogram beside the export; read back with the
// library's reader, each group's intervals add up to the export's histogram of the group and
// follow one another to the run's end. report finds them there and draws latency over time;
// a log of another run is left out, and said.
func TestRunHlog(t *testing.T) {
	out, code, exp := cli(t, "run", "seed-incident-fast", "--hlog")
	// A starved machine can make the run itself fail (exit 1, "could not measure"): what is
	// tested here is what it wrote and pushed, which it does all the same.
	if code != 0 && code != 1 || exp == nil {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var path string
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "export: "); ok {
			path = strings.TrimSpace(p)
		}
	}
	dir := strings.TrimSuffix(path, ".json") + ".hlog"
	mustContain(t, out, dir+string(filepath.Separator))
	for _, h := range metrics.Hists() {
		l, err := hlog.ReadFile(filepath.Join(dir, h.String()+".hlog"))
		if err != nil {
			t.Fatal(err)
		}
		if l.RunID != exp.Run.ID {
			t.Errorf("%s: run id %q, the export's %q", h, l.RunID, exp.Run.ID)
		}
		sums, ends := map[string]int64{}, map[string]float64{}
		for _, iv := range l.Intervals {
			sums[iv.Group] += iv.Hist.TotalCount()
			if iv.StartS < ends[iv.Group]-0.001 || iv.EndS <= iv.StartS {
				t.Errorf("%s %s: interval [%.3f, %.3f) overlaps the one before (ending %.3f)", h, iv.Group, iv.StartS, iv.EndS, ends[iv.Group])
			}
			ends[iv.Group] = iv.EndS
		}
		for _, g := range exp.Groups {
			if want := int64(g.Histograms[h.String()].Count); sums[g.Name] != want {
				t.Errorf("%s %s: the intervals add up to %d, the export has %d", h, g.Name, sums[g.Name], want)
			}
			if ends[g.Name] < exp.Run.End.Sub(exp.Run.Start).Seconds()-1.5 {
				t.Errorf("%s %s: the last interval ends at %.3fs, the run at %s", h, g.Name, ends[g.Name], exp.Run.End.Sub(exp.Run.Start))
			}
		}
	}
	var warn strings.Builder
	if logs := hlog.ReadBeside(path, exp.Run.ID, &warn); len(logs) != len(metrics.Hists()) || warn.Len() > 0 {
		t.Fatalf("%d logs read beside %s (%s), want %d", len(logs), path, warn.String(), len(metrics.Hists()))
	}
	html := filepath.Join(t.TempDir(), "r.html")
	root := newRoot()
	root.SetArgs([]string{"report", path, "-o", html})
	root.SetOut(&warn)
	root.SetErr(&warn)
	if err := root.Execute(); err != nil {
		t.Fatal(err, warn.String())
	}
	page, _ := os.ReadFile(html)
	if !strings.Contains(string(page), "tool_call_latency over time") {
		t.Error("the report has no tool_call_latency over time plot")
	}
	other := *exp
	other.Run.ID = "another-run"
	warn.Reset()
	if logs := hlog.ReadBeside(path, other.Run.ID, &warn); len(logs) != 0 || !strings.Contains(warn.String(), `is of run "`+exp.Run.ID+`"`) {
		t.Errorf("the logs of run %s were taken for run another-run (%d logs; %q)", exp.Run.ID, len(logs), warn.String())
	}
}

// The logs' directory obeys the outputs' rules: never a FIFO or a file in its place, never a
// directory holding anything but .hlog files, never with the export on stdout and no name.
func TestHlogOutputsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	mixed := filepath.Join(dir, "mixed")
	os.MkdirAll(mixed, 0o755)
	os.WriteFile(filepath.Join(mixed, "notes.txt"), []byte("mine"), 0o644)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, tc := range []struct {
		fl   hlogFlags
		out  string
		want string
	}{
		{hlogFlags{dir: fifo}, filepath.Join(dir, "r.json"), "not a directory"},
		{hlogFlags{dir: file}, filepath.Join(dir, "r.json"), "not a directory"},
		{hlogFlags{dir: mixed}, filepath.Join(dir, "r.json"), "notes.txt"},
		{hlogFlags{beside: true}, "-", "give --hlog-dir"},
		{hlogFlags{dir: filepath.Join(dir, "r")}, filepath.Join(dir, "r", "x.hlog"), ""},
	} {
		err := tc.fl.check(tc.out, 1)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v with --out %s: %v, want a usage error saying %q", tc.fl, tc.out, err, tc.want)
		}
	}
	if err := (&hlogFlags{beside: true}).check(filepath.Join(dir, "r.json"), 4); err == nil {
		t.Error("--hlog with --procs 4 was accepted")
	}
	if data, _ := os.ReadFile(file); string(data) != "x" {
		t.Error("the file in the logs' place was changed")
	}
}
