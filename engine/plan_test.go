package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Every client is in exactly one shard, and shards differ by at most one client.
func TestShareOf(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for count := 1; count <= 9; count++ {
			sum, lo, hi := 0, n, 0
			for i := range count {
				s := shareOf(n, i, count)
				sum += s
				lo, hi = min(lo, s), max(hi, s)
			}
			if sum != n || hi-lo > 1 {
				t.Fatalf("%d clients over %d shards: sum %d, spread %d..%d", n, count, sum, lo, hi)
			}
		}
	}
}

func TestShardWorkload(t *testing.T) {
	w := tinyWorkload(t, "tiny", 3)
	part := shardWorkload(w, &Shard{Index: 3, Count: 4})
	if part.Groups[0].Clients != 0 || part.Groups[1].Clients != 0 {
		t.Errorf("shard 3/4 of 3 clients: %d, %d, want none", part.Groups[0].Clients, part.Groups[1].Clients)
	}
	if part = shardWorkload(w, &Shard{Index: 0, Count: 2}); part.Groups[0].Clients != 2 || part.Hash != w.Hash || part.Name != w.Name {
		t.Errorf("shard 0/2: %+v", part.Groups[0])
	}
	if w.Groups[0].Clients != 3 {
		t.Error("sharding changed the workload it was given")
	}
}

// One process runs at most workloads.MaxClientsPerProcess clients: more is refused before
// anything starts, pointing to shards; a shard's part is what counts.
func TestPlanCapsClientsPerProcess(t *testing.T) {
	w := tinyWorkload(t, "big", workloads.MaxClientsPerProcess) // two groups: twice the cap
	_, err := NewPlan(w)
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "one process would run 200000 clients") || !strings.Contains(err.Error(), "--procs") {
		t.Fatalf("the whole fleet in one process: %v", err)
	}
	if _, err := NewPlan(w, WithShard(0, 2)); err != nil {
		t.Fatalf("half of it: %v", err)
	}
}

// What NewPlan checked is what runs: the caller's workload, its copy handed out by the plan,
// and the accessors' slices and maps may all change afterwards without touching the plan.
func TestPlanCannotBeChangedAfterNewPlan(t *testing.T) {
	w := tinyWorkload(t, "tiny", 3)
	w.Groups[0].Arguments = map[string]any{"text": "planned"}
	th, err := gate.ParseThreshold("probe.misattributed_errors == 0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(w, WithLabels(map[string]string{"release": "v1"}), WithShard(0, 1), WithThresholds(th))
	if err != nil {
		t.Fatal(err)
	}
	// What issue 31 did: a value no file could hold, set after the check.
	w.Groups[0].Clients = -3
	w.Groups[0].Arguments["text"] = "changed"
	w.Phases[0].Duration = -time.Second
	w.Faults = nil
	got := p.Workload()
	got.Groups[1].Clients = 100000
	got.Groups = nil
	p.Thresholds()[0].Expr = "changed"
	p.Labels()["release"] = "changed"
	p.Shard().Count = 7

	again := p.Workload()
	if err := again.Validate(); err != nil {
		t.Fatalf("the plan's workload changed with the caller's: %v", err)
	}
	switch {
	case again.Groups[0].Clients != 3 || again.Groups[1].Clients != 3:
		t.Errorf("clients %d, %d; want the planned 3, 3", again.Groups[0].Clients, again.Groups[1].Clients)
	case again.Groups[0].Arguments["text"] != "planned":
		t.Errorf("arguments %v; want the planned ones", again.Groups[0].Arguments)
	case again.Phases[0].Duration != 400*time.Millisecond || len(again.Faults) != 1:
		t.Errorf("phases %v, faults %v; want the planned ones", again.Phases, again.Faults)
	case len(p.Thresholds()) != 1 || p.Thresholds()[0].Expr == "changed":
		t.Errorf("thresholds %v", p.Thresholds())
	case p.Labels()["release"] != "v1" || p.Shard().Count != 1:
		t.Errorf("labels %v, shard %v", p.Labels(), p.Shard())
	}
	if again == p.workload || again.Groups[0].Arguments == nil {
		t.Error("Workload handed out the plan's own workload")
	}
}

// Run refuses what is not a plan with a *ConfigError, in the caller's goroutine, before it
// touches anything: no panic.
func TestRunRefusesNoPlan(t *testing.T) {
	w := tinyWorkload(t, "tiny", 1)
	p, err := NewPlan(w)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		ctx  context.Context
		plan *Plan
		want string
	}{
		{"nil plan", context.Background(), nil, "no plan; make one with engine.NewPlan"},
		{"zero plan", context.Background(), &Plan{}, "an empty Plan; a plan comes from engine.NewPlan"},
		{"nil context", nil, p, "no context"},
	} {
		t.Run(c.name, func(t *testing.T) {
			exp, err := Run(c.ctx, c.plan, nil) // a nil Option is no option
			var ce *ConfigError
			if exp != nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Run = %v, %v; want no export and a ConfigError saying %q", exp, err, c.want)
			}
		})
	}
	if _, err := NewPlan(w, nil); err != nil {
		t.Errorf("NewPlan with a nil option: %v", err)
	}
}
