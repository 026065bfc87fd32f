package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpchaos/mcpchaos/inspect"
	"github.com/mcpchaos/mcpchaos/internal/redistest"
	"github.com/mcpchaos/mcpchaos/refserver"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Release day as scripts (testdata/release/*.txtar): exec actions against a real
// `mcpchaos serve` process.
func TestReleaseScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/release",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"freeaddr":    cmdFreeAddr,
			"serve":       cmdServeProcess,
			"expand":      cmdExpand,
			"checkaction": cmdCheckAction,
			"docblock":    cmdDocBlock,
			"status": func(ts *testscript.TestScript, neg bool, args []string) {
				want, _ := strconv.Atoi(args[0])
				got := 0
				if err := ts.Exec(args[1], args[2:]...); err != nil {
					ee, ok := err.(*exec.ExitError)
					if !ok {
						ts.Fatalf("status: %v", err)
					}
					got = ee.ExitCode()
				}
				if got != want {
					ts.Fatalf("exit status %d, want %d", got, want)
				}
			},
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir)
			return nil
		},
	})
}

// serve ADDRVAR PIDFILE: start `mcpchaos serve` on $ADDRVAR as a process of its own, its PID in
// PIDFILE; when the script ends, the process whose PID PIDFILE then holds (a deploy may have
// replaced it) is stopped.
func cmdServeProcess(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: serve ADDRVAR PIDFILE")
	}
	addr, pidfile := ts.Getenv(args[0]), ts.MkAbs(args[1])
	var bin string
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) { // testscript's mcpchaos comes first
		if p := filepath.Join(dir, "mcpchaos"); bin == "" {
			if _, err := os.Stat(p); err == nil {
				bin = p
			}
		}
	}
	if bin == "" {
		ts.Fatalf("serve: no mcpchaos on the script's PATH")
	}
	cmd := exec.Command(bin, "serve", "--addr", addr, "--ttl", "30s", "--retention", "60s")
	cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"))
	ts.Check(cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	ts.Check(os.WriteFile(pidfile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644))
	ts.Defer(func() {
		data, _ := os.ReadFile(pidfile)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGTERM) // the serve process this script started, or its replacement
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	waitHealthy(ts, "http://"+addr+"/healthz")
}

// expand FILE VAR...: replace $VAR in FILE with the script's value of each VAR named; other
// references are left for the run to expand from its environment.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: expand FILE VAR...")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	out := string(data)
	for _, k := range args[1:] {
		out = strings.ReplaceAll(out, "$"+k, ts.Getenv(k))
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(out), 0o644))
}

// checkaction FILE NAME STATUS TEXT...: the export's action NAME exited with STATUS and its
// output holds each TEXT.
func cmdCheckAction(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: checkaction FILE NAME STATUS TEXT...")
	}
	exp, err := results.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	for _, a := range exp.Actions {
		if a.Action != args[1] {
			continue
		}
		if a.ExitStatus == nil || strconv.Itoa(*a.ExitStatus) != args[2] {
			ts.Fatalf("action %s: exit status %v, want %s", a.Action, a.ExitStatus, args[2])
		}
		for _, want := range args[3:] {
			if !strings.Contains(a.Output, want) {
				ts.Fatalf("action %s: output %q lacks %q", a.Action, a.Output, want)
			}
		}
		if a.EndedAtS < a.StartedAtS || a.StartedAtS <= 0 {
			ts.Fatalf("action %s: times %v..%v", a.Action, a.StartedAtS, a.EndedAtS)
		}
		return
	}
	ts.Fatalf("no action %s in %s: %+v", args[1], args[0], exp.Actions)
}

// docblock DOC HEADING OUT: write the first fenced code block under the heading HEADING of
// DOC (a path from this package's directory) to OUT, verbatim: a recipe the docs show is the
// recipe the test runs.
func cmdDocBlock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: docblock DOC HEADING OUT")
	}
	data, err := os.ReadFile(args[0]) // relative to the package directory, where the test runs
	ts.Check(err)
	_, after, ok := strings.Cut(string(data), "\n## "+args[1]+"\n")
	if !ok {
		ts.Fatalf("%s has no heading %q", args[0], args[1])
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		ts.Fatalf("%s: no ```sh block under %q", args[0], args[1])
	}
	block, _, _ = strings.Cut(block, "```")
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(block), 0o644))
}

// waitHealthy polls url (20 s at most) until it answers 200: the server is up.
func waitHealthy(ts *testscript.TestScript, url string) {
	hc := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err := hc.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	ts.Fatalf("%s never answered 200", url)
}

// runRelease runs rolling-deploy-fast (or affinity-loss-fast) with its event_log replaced.
func runRelease(t *testing.T, name, eventLog string) *results.Export {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "workloads", "builtin", name+".yaml"))
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
	out := filepath.Join(t.TempDir(), "r.json")
	if err := runWorkload(context.Background(), w, runFlags{out: out, progress: "off", quiet: true}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	exp, err := results.ReadFile(out)
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
			if nc["misattributed_errors"] < 5 || nc["stale_events_applied"] < 5 || nc["replays_ok"] < 5 {
				t.Errorf("naive: the deploy's cascade did not happen: %v", nc)
			}
			if pc["misattributed_errors"] != 0 || pc["replays_ok"] < 5 || pc["events_quarantined"] < 5 || pc["sessions_dead_detected"] < 5 {
				t.Errorf("probe: %v", pc)
			}
			// Stale means replayed after the death (fleet.Client.apply): probe never applies one.
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
			if exp.Topology.LogErrors != 0 {
				t.Errorf("%d event-log errors", exp.Topology.LogErrors)
			}
			if len(exp.Actions) != 1 || exp.Actions[0].Kind != "restart" || exp.Actions[0].Error != "" {
				t.Errorf("actions %+v", exp.Actions)
			}
			var steps []string
			for _, f := range exp.Faults {
				if f.Fault != "rolling-deploy" {
					continue
				}
				i := len(steps)
				steps = append(steps, fmt.Sprintf("%s@%.2f", f.Proxy, f.AddedAtS))
				if want := 2.5 + float64(i); f.Proxy != fmt.Sprintf("replica-%d", i) || f.AddedAtS < want || f.AddedAtS > want+0.5 {
					t.Errorf("deploy step %d: %s at %.2fs, want replica-%d at %.1fs (1s apart)", i, f.Proxy, f.AddedAtS, i, want)
				}
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

// inspect against the topology's front door (the router) fingerprints the regime the replicas
// share: a permissive GET over a shared log replays a dead session with 200.
func TestInspectClusterFrontDoor(t *testing.T) {
	t.Parallel()
	inst, err := refserver.StartCluster("127.0.0.1:0", refserver.Config{SessionTTL: time.Second, Retention: time.Minute, NotifyInterval: 100 * time.Millisecond},
		refserver.Topology{Replicas: 3, EventLog: refserver.LogShared})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	u, _ := url.Parse(inst.URL)
	fp, err := inspect.Inspect(context.Background(), inspect.Options{Conn: wire.Conn{URL: u}, TTL: time.Second, Idle: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if fp.ReplayAfterDeath == nil || !*fp.ReplayAfterDeath {
		t.Errorf("replay_after_death = %v, want true", fp.ReplayAfterDeath)
	}
	var names []string
	for _, h := range fp.Verdict.Hazards {
		names = append(names, h.Name)
	}
	if !slices.Contains(names, "replay_lies") || fp.Verdict.Probe != "ping" {
		t.Errorf("verdict %+v", fp.Verdict)
	}
}
