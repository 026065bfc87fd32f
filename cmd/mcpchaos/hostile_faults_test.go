package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/hostile"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// faultsOnTime is how late a fault may be applied or removed (issue 20). A run that its own
// generator found starved is held to faultsStarved instead: its timer, not Toxiproxy, was late
// (seen up to 1.7 s at load 30 under the race detector), and the old failure (a call abandoned
// after faults.CallBound, 5 s, and nothing applied after it) is still caught.
const (
	faultsOnTime  = 100 * time.Millisecond
	faultsStarved = faults.CallBound / 2
)

// A run whose clients hold GET streams carrying 64 MiB events, or a gzip bomb, applies and
// removes every fault of its schedule within 100 ms of plan, as the export's fault log shows,
// and its first problem line names what the server sent (an event's size is read on, bounded:
// "an event of 64.0 MiB", or "of at least …" where the reading stopped). A starved run may end
// before a fault late within its bound was applied: the fault log must then say so (issue 30:
// at load 16 slow2, due 800 ms before the end, was missing from it). Run it 10 times with
// -run TestFaultsOnTimeAgainstHostileStreams -count 10.
func TestFaultsOnTimeAgainstHostileStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of 3 s")
	}
	h := hostile.New(t)
	wpath := filepath.Join("testdata", "hostile-faults.yaml")
	w, err := workloads.Load(wpath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, says string }{
		{"event-64mib", "the server sent an SSE event larger than mcpchaos reads"},
		{"gzip-stream", "the server sent a gzip body"},
	} {
		t.Run(c.path, func(t *testing.T) {
			dir := t.TempDir()
			out := runCmd(t, dir, "run", wpath, "--target", h.URL(c.path), "--progress", "off", "--out", filepath.Join(dir, "r.json"))
			exp, err := results.ReadFile(filepath.Join(dir, "r.json"))
			if err != nil {
				t.Fatal(err)
			}
			bound, starved := faultsOnTime, starvedRun(exp)
			if starved != "" {
				bound = faultsStarved
				t.Logf("the run was starved (%s): held to %v, not %v", starved, faultsStarved, faultsOnTime)
			}
			switch first := firstProblem(out, "could not start"); {
			case strings.Contains(first, c.says):
			case starved != "" && strings.Contains(out, c.says):
				t.Logf("starved: the cause is named, not first: %q", first)
			case starved != "":
				t.Logf("starved: the server's conduct did not show before the run ended: %q", first)
			default:
				t.Errorf("first problem line %q does not say %q", first, c.says)
			}
			checkFaultLog(t, w.Faults, exp.Faults, bound, exp.Run.End.Sub(exp.Run.Start))
		})
	}
}

// checkFaultLog fails unless every planned fault was applied on every proxy, without error,
// and applied and removed no earlier than planned and at most bound after. A fault the run
// ended (ran after its start) before its bound was up may instead be logged as not reached
// (faults.ErrNotReached): late within the bound, it was never applied, and the log says so.
// A fault missing from the log fails whatever the bound.
func checkFaultLog(t *testing.T, plan []workloads.Fault, log []results.FaultAt, bound, ran time.Duration) {
	t.Helper()
	worst := time.Duration(0)
	for _, f := range plan {
		n := 0
		for _, fa := range log {
			if fa.Fault != f.Name {
				continue
			}
			n++
			if strings.Contains(fa.Error, faults.ErrNotReached.Error()) && ran < f.At+bound {
				t.Logf("%-14s not reached: the run ended %v after its plan, within the bound %v", f.Name, (ran - f.At).Round(time.Millisecond), bound)
				continue
			}
			on := time.Duration(fa.AddedAtS*float64(time.Second)) - f.At
			off := time.Duration(fa.RemovedAtS*float64(time.Second)) - (f.At + f.For)
			worst = max(worst, on, off)
			t.Logf("%-14s on %+v, off %+v after plan", f.Name, on.Round(time.Millisecond), off.Round(time.Millisecond))
			if fa.Error != "" || on < 0 || on > bound || fa.RemovedAtS == 0 || off < 0 || off > bound {
				t.Errorf("fault %s on %s: applied %v and removed %v after plan (bound %v), error %q", f.Name, fa.Proxy, on, off, bound, fa.Error)
			}
		}
		if n == 0 {
			t.Errorf("fault %s never applied, and the fault log does not say why", f.Name)
		}
	}
	t.Logf("the latest change %v after plan", worst.Round(time.Millisecond))
}
