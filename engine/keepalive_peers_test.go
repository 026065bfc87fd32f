package engine

import (
	"fmt"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Keep-alive shapes are the reference server's to choose (keepalive:); a real server has the
// one its SDK gives it. Behind the same 1 s idle cutoff as TestKeepaliveShapeBehindIdleCutoff,
// with nothing else on their GET streams (no notifications): the Go SDK v1.8.0's server sends
// no keep-alive, mcp-go v1.2.1's none by default, the TypeScript SDK 1.32.2's a `: keepalive`
// comment every 15 s (DEFAULT_SSE_KEEP_ALIVE_MS), slower than the cutoff: every client's
// stream is cut. mcp-go with its heartbeat (a ping request every 100 ms on each GET stream,
// which the client answers) keeps every stream.
func TestKeepaliveOfRealServersBehindIdleCutoff(t *testing.T) {
	if testing.Short() {
		t.Skip("interop test: 4s")
	}
	t.Parallel()
	for _, tc := range []struct {
		name  string
		start func(testing.TB, peers.Options) *peers.Server
		drops bool
	}{
		{"go-sdk", peers.GoSDK, true},
		{"mcp-go", peers.MCPGo, true},
		{"ts-sdk", peers.TS, true},
		{"mcp-go-heartbeat", peers.MCPGoHeartbeat, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := tc.start(t, peers.Options{})
			src := fmt.Sprintf(`name: keepalive-%s
target: {url: %s, session_ttl: none}
phases:
  - {name: active, duration: 4s, calls: true}
groups:
  - {name: probe, policy: probe, clients: 2, ramp: 200ms, call_every: 200ms, concurrency: 1, tool: lookup_order, arguments: {order_id: "o-1", quantity: 1}}
faults:
  - {name: lb-idle-cutoff, toxic: idle_timeout, attributes: {timeout: 1000}, at: 0s}
`, tc.name, srv.URL)
			w, err := workloads.Parse("keepalive-peers.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			exp, err := Run(t.Context(), mustPlan(t, w), WithStderr(testWriter{t}))
			if exp == nil {
				t.Fatalf("no export: %v", err)
			}
			g := groupNamed(t, exp, "probe")
			c := g.Counters
			t.Logf("%s: drops %d, replays 200 %d, calls ok %d, server requests answered %d", tc.name, c["drops"], c["replays_ok"], c["tool_calls_ok"], c["server_requests_answered"])
			switch {
			case c["tool_calls_ok"] == 0:
				t.Errorf("%s: no call succeeded: %v", tc.name, c)
			case tc.drops && c["drops"] < int64(g.Clients):
				t.Errorf("%s: %d streams dropped, want at least one for each of its %d clients", tc.name, c["drops"], g.Clients)
			case !tc.drops && c["drops"] != 0:
				t.Errorf("%s: %d streams dropped, want none (its heartbeat keeps them)", tc.name, c["drops"])
			}
		})
	}
}
