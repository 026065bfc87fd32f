package shards_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/shards"
)

const tiny = `name: tiny
target:
  builtin: {session_ttl: 5s}
phases:
  - {name: active, duration: 1500ms, calls: true}
groups:
  - {name: naive, clients: 3, policy: naive, call_every: 300ms}
  - {name: probe, clients: 4, policy: probe, call_every: 300ms}
`

// A Go caller runs a workload as two shard processes of the real binary against one reference
// server process, and gets the merged export: every client of every group once, both shards
// merged, the generator section counted for one machine, the groups' error causes filled.
func TestSupervisorRunsAndMerges(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpchaos and runs it for a few seconds")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcpchaos")
	build := exec.Command("go", "build", "-o", bin, "github.com/mcpchaos/mcpchaos/cmd/mcpchaos")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	wl := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(wl, []byte(tiny), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.shards")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // the bound: SIGINT to the shards at its end
	defer cancel()
	sup := shards.New(shards.Config{Binary: bin, Workload: wl, Count: 2, Dir: out,
		Start: time.Now().Add(shards.Lead), Serve: true, Args: []string{"--label", "by=go"}})
	defer sup.Close()
	if err := sup.Start(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := sup.Collect(false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Err() != nil || res.Interrupted || len(res.Parts) != 2 {
		t.Fatalf("shards: %v, interrupted %v, %d merged", res.Err(), res.Interrupted, len(res.Parts))
	}
	e := res.Export
	if got := e.Overall.Counters["sessions_started"]; got < 7 {
		t.Errorf("sessions_started %d, want every one of the 7 clients at least once", got)
	}
	if e.Overall.Clients != 7 || len(e.Run.MergedShards) != 2 || e.Run.Labels["by"] != "go" {
		t.Errorf("clients %d, shards %d, labels %v", e.Overall.Clients, len(e.Run.MergedShards), e.Run.Labels)
	}
	if g := e.Generator; g == nil || g.Shards != 2 || g.Machine == "" || g.CPUs > shards.ThisMachine().CPUs {
		t.Errorf("generator %+v: two shards of this one machine, its CPUs once", g)
	}
	if e.Overall.Causes == nil || e.Groups[0].Causes == nil {
		t.Error("no error causes in the merge")
	}
	if st := sup.Status([]string{"naive", "probe"}); len(st) != 2 || st[0].Name != "naive" {
		t.Errorf("status %+v", st)
	}
}
