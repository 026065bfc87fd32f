package engine

import (
	"errors"
	"strings"
	"testing"

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
