package engine

import (
	"fmt"
	"os"
	"testing"
)

// Live sessions declared dead (issue 29): the reference server's evicting event log answers a
// resume from an evicted cursor 404, as expiry; no session dies in the run (TTL 30s), so every
// session a client abandons on that 404 is a live one declared dead. The run knows each death
// exactly, so the count is the server's record, per group: naive and probe both tear down on a
// dead replay status; the Go SDK's client ends the session itself. Bounds only: each group's
// every client met one drop.
func TestEvictedCursorDeclaresLiveSessionsDead(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test: 5s")
	}
	yaml, err := os.ReadFile("../workloads/examples/evicted-cursor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := runLibraries(t, string(yaml))
	for _, name := range []string{"naive", "probe", "gosdk"} {
		c := group(t, e, name).Counters
		logDeclared(t, name, c)
		if c["live_sessions_declared_dead"] == 0 || c["live_sessions_declared_dead"] > c["replays_dead"] {
			t.Errorf("%s: live sessions declared dead %d, replays answered dead %d: want some, at most one per dead replay",
				name, c["live_sessions_declared_dead"], c["replays_dead"])
		}
		if c["sessions_dead"] != 0 || c["misattributed_errors"] != 0 {
			t.Errorf("%s: sessions dead %d, misattributed %d: no session died", name, c["sessions_dead"], c["misattributed_errors"])
		}
	}
}

// evictingGoSDKWorkload runs wire clients against a server whose event store keeps little (at
// first the Go SDK's, whose test now runs in clients/fleet with phases that follow what
// happened): a proxy outage makes the clients' cursors purged while their sessions live. dead400 takes 400 for a dead session, as a client of the TypeScript SDK's
// 400-for-unknown-session server is told to (--dead-statuses 400).
func evictingGoSDKWorkload(url string) string {
	return fmt.Sprintf(`name: evicted-gosdk
target:
  url: %s
  session_ttl: none
phases:
  - {name: active, duration: 1s, calls: true}
  - {name: outage, duration: 2.5s, calls: false}
  - {name: after, duration: 1.5s, calls: true}
x-group: &g {clients: 4, ramp: 300ms, call_every: 300ms, tool: lookup_order, arguments: {order_id: "o-1", quantity: 1}, log_level: info, request_timeout: 4s}
groups:
  - {<<: *g, name: naive, policy: naive}
  - {<<: *g, name: probe, policy: probe}
  - {<<: *g, name: dead400, policy: probe, dead_statuses: [404, 410, 400]}
faults:
  - {name: outage, toxic: down, at: 1.2s, for: 1s}
`, url)
}

// logDeclared logs the figures docs/real-servers.md quotes.
func logDeclared(t *testing.T, name string, c map[string]int64) {
	t.Logf("%s: drops %d, replays 200/dead/refused %d/%d/%d, resyncs %d, live sessions declared dead %d, sessions dead %d, sessions started %d, reconnects refused %d",
		name, c["drops"], c["replays_ok"], c["replays_dead"], c["replays_unknown_cursor"], c["resyncs"],
		c["live_sessions_declared_dead"], c["sessions_dead"], c["sessions_started"], c["reconnects_refused"])
}
