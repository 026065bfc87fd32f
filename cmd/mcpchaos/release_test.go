package main

import (
	"context"
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
	"github.com/mcpchaos/mcpchaos/refserver"
	"github.com/mcpchaos/mcpchaos/results"
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
