package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/peers"
)

// A server that speaks both generations (the reference server, the Go SDK's stateless server,
// mcp-go) is measured as the workload's protocol says, and the summary and the export say
// which generation was measured and that the other exists. In the stateless revision each
// client holds a listen stream: an outage cuts it, the client listens again, and on the
// reference server (which numbers its notifications) what was sent in between is counted
// lost.

const statelessListenWorkload = `name: listen
target: %s
phases:
  - {name: calls, duration: 2500ms, calls: true}
groups:
  - {name: g, clients: 3, policy: naive, call_every: 200ms, retries: 4, retry_backoff: 100ms, request_timeout: 3s%s}
faults:
  - {name: out, toxic: down, at: 700ms, for: 500ms}
`

// listenWorkload writes statelessListenWorkload against target with extra keys for the group.
func listenWorkload(t *testing.T, target, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(p, fmt.Appendf(nil, statelessListenWorkload, target, extra), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunStatelessListenReferenceServer(t *testing.T) {
	w := listenWorkload(t, "{builtin: {session_ttl: 1m, notify_interval: 50ms}}", ", protocol: 2026-07-28, tool: echo")
	out, code, exp := cli(t, "run", w)
	if exp == nil || code != exitOK {
		t.Fatalf("exit %d (export %t):\n%s", code, exp != nil, out)
	}
	if exp.Run.Generation != "stateless" || exp.Run.OtherGeneration != "session" {
		t.Errorf("generation %q, other %q: want stateless measured, the session family named", exp.Run.Generation, exp.Run.OtherGeneration)
	}
	mustContain(t, out, "generation: stateless (the target also speaks the session generation", "listens / drops", "notifications lost")
	mustContain(t, strings.Join(exp.Run.Notes, "\n"), "speaks both generations", "measured the stateless revision")
	c := group(t, exp, "g").Counters
	if c["listens"] <= 3 || c["listen_drops"] == 0 || c["notifications_lost"] == 0 || c["notifications_received"] == 0 {
		t.Errorf("an outage cut 3 clients' listen streams through 10 broadcasts, yet: %v", c)
	}
	if na := exp.Run.NotObservable["g"]; slices.Contains(na, "notifications_lost") {
		t.Errorf("notifications_lost not observable on the reference server, which numbers them: %v", na)
	}
}

// Without protocol the same server is measured in the session family; the export says the
// stateless revision exists, the summary does not (the built-in target speaks both by design:
// noise for a newcomer's demo; a server by URL gets the line, TestRunDualGenerationPeers).
func TestRunDualGenerationDefault(t *testing.T) {
	w := listenWorkload(t, "{builtin: {session_ttl: 1m}}", "")
	out, _, exp := cli(t, "run", w)
	if exp == nil {
		t.Fatalf("no export:\n%s", out)
	}
	if exp.Run.Generation != "session" || exp.Run.OtherGeneration != "stateless" {
		t.Errorf("generation %q, other %q: want session measured, the stateless revision named", exp.Run.Generation, exp.Run.OtherGeneration)
	}
	if strings.Contains(out, "generation:") {
		t.Errorf("a generation line in the summary of the built-in target measured by default:\n%s", out)
	}
	if strings.Contains(out, "listens / drops") {
		t.Errorf("listen rows in a session-family run:\n%s", out)
	}
}

// The real servers that speak both: measured as the workload says, the other named. Against
// the Go SDK's stateless server the listen stream is held and cut, and since it numbers
// nothing, notifications_lost is shown as not observable, never as 0; mcp-go acknowledges a
// listen too.
func TestRunDualGenerationPeers(t *testing.T) {
	for _, p := range []*peers.Server{peers.GoSDKStateless(t, peers.Options{Notify: 60e6}), peers.MCPGo(t, peers.Options{})} {
		t.Run(p.Name, func(t *testing.T) {
			url := "{url: " + p.URL + "}"
			args := ", tool: lookup_order, arguments: {order_id: \"o-{{seq}}\", quantity: 1}"
			w := listenWorkload(t, url, args+", protocol: 2026-07-28")
			out, _, exp := cli(t, "run", w)
			if exp == nil {
				t.Fatalf("no export:\n%s", out)
			}
			if exp.Run.Generation != "stateless" || exp.Run.OtherGeneration != "session" {
				t.Errorf("generation %q, other %q", exp.Run.Generation, exp.Run.OtherGeneration)
			}
			c := group(t, exp, "g").Counters
			if c["listens"] < 3 || c["tool_calls_ok"] == 0 {
				t.Errorf("the server offers listen streams; the run: %v", c)
			}
			if p.Name == "go-sdk-stateless" {
				if c["listen_drops"] == 0 || c["notifications_received"] == 0 || c["notifications_received"] > p.Stats().Notified {
					t.Errorf("listen through an outage: %v; the server sent %d notifications", c, p.Stats().Notified)
				}
			}
			if !slices.Contains(exp.Run.NotObservable["g"], "notifications_lost") {
				t.Errorf("the server numbers no notifications, yet notifications_lost is observable: %v", exp.Run.NotObservable)
			}
			mustRow(t, out, "notifications lost", "not observable")

			w = listenWorkload(t, url, args)
			out, _, exp = cli(t, "run", w)
			if exp == nil {
				t.Fatalf("no export:\n%s", out)
			}
			if !strings.HasPrefix(exp.Run.Generation, "session") || exp.Run.OtherGeneration != "stateless" {
				t.Errorf("without protocol: generation %q, other %q", exp.Run.Generation, exp.Run.OtherGeneration)
			}
			mustContain(t, out, "(the target also speaks the stateless generation: protocol: 2026-07-28")
			if exp.Run.WithheldWhy("g", "listens") != "" {
				t.Errorf("listen figures withheld in a session-family run: %v", exp.Run.Withheld)
			}
		})
	}
}
