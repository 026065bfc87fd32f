package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/redistest"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Release day, on the export Run returns (these tests lived in cmd/mcpchaos, reading the
// export back from a file). Each follows its workload's 10 s timeline on the real clock: the
// reference server's replicas and the proxies are real sockets, which synctest's fake clock
// cannot drive.

// runRelease runs rolling-deploy-fast (or affinity-loss-fast) with its event_log replaced.
// releaseClients is how many clients a group of a release-day built-in has in these tests: the
// workloads' 24 a group, under -race on two busy cores, were not all holding their streams when
// the fault came at 2.5 s (a run seen with every drop missed, its set-up starved); 12 a group
// set up in a fraction of that, and still spread over every replica (about 4 sessions each per
// group) with deaths enough for the bounds below.
const releaseClients = 12

func runRelease(t *testing.T, name, eventLog string) *results.Export {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "workloads", "builtin", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	if eventLog != "" {
		if !strings.Contains(text, "event_log: shared") {
			t.Fatal("the builtin no longer says event_log: shared")
		}
		text = strings.Replace(text, "event_log: shared", "event_log: "+eventLog, 1)
	}
	w, err := workloads.Parse(name+".yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	for i := range w.Groups {
		w.Groups[i].Clients = releaseClients
	}
	exp, err := Run(context.Background(), mustPlan(t, w), WithStderr(testWriter{t}))
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

// deathsBy counts the export's recorded deaths of one cause (and fault), and the replicas
// they happened on.
func deathsBy(exp *results.Export, cause, fault string) (n int, replicas map[int]bool) {
	replicas = map[int]bool{}
	if exp.Topology == nil {
		return 0, replicas
	}
	for _, d := range exp.Topology.Deaths {
		if d.Cause == cause && d.Fault == fault {
			n += d.Sessions
			replicas[d.Replica] = true
		}
	}
	return n, replicas
}

// The release-day promise: a rolling deploy with the event log shared (in memory, or in a real
// Redis) makes the naive group misattribute errors and apply events of dead sessions after the
// deploy, and the probe group neither; every death is the deploy's, on each replica in turn.
func TestRollingDeployFast(t *testing.T) {
	for _, tc := range []struct{ name, log string }{{"shared", ""}, {"redis", "redis"}} {
		t.Run(tc.name, func(t *testing.T) { // one at a time: fleets of 48 under -race starve each other on 2 cores
			log := tc.log
			if log == "redis" {
				log = redistest.Start(t)
			}
			exp := runRelease(t, "rolling-deploy-fast", log)
			nc, pc := group(t, exp, "naive").Counters, group(t, exp, "probe").Counters
			// The cascade happened, and the prevention: at least once each. How many streams were
			// open at a replica's restart (and so how many replays) is the machine's: at load 12
			// a starved run had 4 of 24 naive streams replayed (the bound was 5).
			if nc["misattributed_errors"] == 0 || nc["stale_events_applied"] == 0 || nc["replays_ok"] == 0 {
				t.Errorf("naive: the deploy's cascade did not happen: %v", nc)
			}
			if pc["misattributed_errors"] != 0 || pc["replays_ok"] == 0 || pc["events_quarantined"] == 0 || pc["sessions_dead_detected"] == 0 {
				t.Errorf("probe: %v", pc)
			}
			// Stale means replayed after the death (fleet.Client.Apply): probe never applies one.
			if pc["stale_events_applied"] != 0 {
				t.Errorf("probe applied %d stale events (naive %d)", pc["stale_events_applied"], nc["stale_events_applied"])
			}
			n, replicas := deathsBy(exp, "restart", "rolling-deploy")
			if n < 10 || len(replicas) != 3 {
				t.Errorf("restart deaths %d on replicas %v; want the deploy's on all 3: %+v", n, replicas, exp.Topology)
			}
			if n, _ := deathsBy(exp, "ttl", ""); n != 0 {
				t.Errorf("%d TTL deaths in a run shorter than the TTL", n)
			}
			// Each Redis command has a second (refserver's redisTimeout): a machine stalled
			// longer fails one, which the cascade above survives. More than a few is a broken log.
			if exp.Topology.LogErrors > 3 {
				t.Errorf("%d event-log errors", exp.Topology.LogErrors)
			}
			if len(exp.Actions) != 1 || exp.Actions[0].Kind != "restart" || exp.Actions[0].Error != "" {
				t.Errorf("actions %+v", exp.Actions)
			}
			var steps []string
			prev := 0.0
			for _, f := range exp.Faults {
				if f.Fault != "rolling-deploy" {
					continue
				}
				i := len(steps)
				steps = append(steps, fmt.Sprintf("%s@%.2f", f.Proxy, f.AddedAtS))
				// In order, never before its time, a step after the one before: how late a
				// step comes is the machine's (a stalled run applies it late, never early).
				if want := 2.5 + float64(i); f.Proxy != fmt.Sprintf("replica-%d", i) || f.AddedAtS < want || f.AddedAtS <= prev {
					t.Errorf("deploy step %d: %s at %.2fs, want replica-%d at %.1fs or later, after %.2fs", i, f.Proxy, f.AddedAtS, i, want, prev)
				}
				prev = f.AddedAtS
			}
			if len(steps) != 3 {
				t.Errorf("fault timeline of the deploy: %v", steps)
			}
		})
	}
}

// With per-replica event logs the log dies with the replica: the replay is refused with 404,
// both groups see the death at the reconnect, nothing is misattributed or applied stale.
func TestRollingDeployPerReplicaLog(t *testing.T) {
	exp := runRelease(t, "rolling-deploy-fast", "per-replica")
	for _, g := range []string{"naive", "probe"} {
		c := group(t, exp, g).Counters
		if c["replays_ok"] != 0 || c["replays_dead"] < 5 || c["events_quarantined"] != 0 || c["sessions_dead_detected"]*4 < c["sessions_dead"]*3 {
			t.Errorf("%s: %v", g, c)
		}
		// Nothing is replayed. What a client applies after a death is what was on the wire when
		// its stream was cut, applied late: none on an idle machine, a few under -race on a
		// loaded one; never a replay's worth.
		if c["stale_events_applied"]*10 > c["events_applied"] {
			t.Errorf("%s applied %d stale events of %d", g, c["stale_events_applied"], c["events_applied"])
		}
	}
	if c := group(t, exp, "probe").Counters; c["misattributed_errors"] != 0 {
		t.Errorf("probe misattributed %d errors", c["misattributed_errors"])
	}
}

// Affinity lost: requests land on replicas that never knew the session; the deaths are the
// rebalance's, and the naive group pays for believing the shared log's replay.
func TestAffinityLossFast(t *testing.T) {
	exp := runRelease(t, "affinity-loss-fast", "")
	nc, pc := group(t, exp, "naive").Counters, group(t, exp, "probe").Counters
	if nc["misattributed_errors"] < 2 || nc["stale_events_applied"] < 1 || pc["misattributed_errors"] != 0 || pc["sessions_dead_detected"] < 2 {
		t.Errorf("naive %v\nprobe %v", nc, pc)
	}
	if n, _ := deathsBy(exp, "rebalance", "lb-reload"); n < 4 {
		t.Errorf("rebalance deaths %d: %+v", n, exp.Topology)
	}
}
