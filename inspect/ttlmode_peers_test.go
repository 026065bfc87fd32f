package inspect

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/peers"
)

// No real server the tests run has an absolute session lifetime: mcp-go v1.2.1's idle TTL
// (WithSessionIdleTTL: its sweeper ends a session idle past it) and the TypeScript SDK peer's
// idle timer (the SDK itself has none: internal/peers/ts/server.mjs resets one per request)
// are both refreshed by activity. inspect --ttl keeps one session busy through the wait and
// must name both sliding, with no absolute_ttl hazard (the Go SDK's server:
// TestInspectTellsAbsoluteTTL). ttl_mode: absolute is measured on the reference server only.
func TestInspectTTLModeOfMCPGoAndTSServers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(testing.TB, peers.Options) *peers.Server
	}{
		{"mcp-go", peers.MCPGo},
		{"ts-sdk", peers.TS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := peerAt(t, tc.start, peerTTL)
			fp := inspectURL(t, u, peerTTL)
			t.Logf("%s: ttl_mode %q, notes %q", tc.name, fp.TTLMode, fp.Notes)
			if fp.TTLMode != "sliding" {
				t.Errorf("ttl_mode %q, want sliding (notes %q)", fp.TTLMode, fp.Notes)
			}
			for _, h := range fp.Verdict.Hazards {
				if h.Name == "absolute_ttl" {
					t.Errorf("absolute_ttl hazard on a server whose TTL activity refreshes: %+v", h)
				}
			}
		})
	}
}
