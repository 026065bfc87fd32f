package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/refserver"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// A rolling upgrade across protocol eras (workloads/examples/mixed-era.yaml, its timeline
// shortened): replicas of the 2025 session revisions only, restarted into both eras, then into
// 2026-07-28 only. The clients keep the era they negotiated, so after the second roll the
// server refuses their requests as of another era and answers their re-initialize 404 with
// -32601: those are counted as wrong-era requests in both groups, and no group counts more
// session deaths than the restarts caused (a 404 is classified by its body, not its status).
func TestMixedEraRollingUpgrade(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "workloads", "examples", "mixed-era.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("duration: 2m", "duration: 1500ms", "duration: 3m", "duration: 1500ms",
		"clients: 30", "clients: 4", "ramp: 30s", "ramp: 200ms", "call_every: 20s", "call_every: 150ms",
		"retry_backoff: 1s", "retry_backoff: 20ms", "delay: 20s", "delay: 100ms", "at: 2m", "at: 1500ms",
		"at: 5m", "at: 3s", "notify_interval: 30s", "notify_interval: 200ms").Replace(string(src))
	w, err := workloads.Parse("mixed-era.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	exp, err := Run(context.Background(), mustPlan(t, w), WithStderr(testWriter{t}))
	if err != nil {
		t.Fatal(err)
	}
	restartDeaths := 0
	if exp.Topology != nil {
		for _, d := range exp.Topology.Deaths {
			if d.Cause == refserver.CauseRestart {
				restartDeaths += d.Sessions
			}
		}
	}
	if restartDeaths == 0 {
		t.Fatalf("no session died of the upgrades: %+v", exp.Topology)
	}
	dead := int64(0)
	for _, g := range exp.Groups {
		if g.Counters["wrong_era_requests"] == 0 {
			t.Errorf("group %s: no wrong-era request counted after the roll to 2026-07-28 only", g.Name)
		}
		dead += g.Counters["sessions_dead"]
	}
	if dead > int64(restartDeaths) {
		t.Errorf("the groups ran into %d session deaths, more than the %d the restarts caused: a wrong-era 404 was taken for a death", dead, restartDeaths)
	}
}
