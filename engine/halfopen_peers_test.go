package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/peers"
)

// The zombie stream against the other real servers (issue 29): the same half_open fault as
// TestHalfOpenAgainstGoSDKServer (each GET stream's client side reset at 1 s, the server's
// side held 2 s), what each server answers to the clients' reconnects while it still holds
// the old stream.

// mcp-go v1.2.1 with its event store attaches a reconnect to the session's listening stream
// and supersedes the connection it held (streamable_http_resume.go: attach, "another
// connection takes over"): the zombie costs nothing, no reconnect is refused, every dropped
// stream is resumed at once. mcp-go v1.2.1's own client, listening (ContinuousListening: its
// GET stream is opt-in), reconnects and keeps its session.
func TestHalfOpenAgainstMCPGoServer(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	srv := peers.MCPGo(t, peers.Options{Notify: 250 * time.Millisecond})
	groups := "  - {name: naive, clients: 2, policy: naive, call_every: 250ms}\n" +
		"  - {name: mcpgo-listen, clients: 2, policy: mcpgo, call_every: 250ms, library_options: {ContinuousListening: true}}"
	e := runLibraries(t, halfOpenWorkload(fmt.Sprintf("  url: %s\n  session_ttl: none", srv.URL), groups))
	for _, g := range e.Groups {
		c := g.Counters
		t.Logf("%s: drops %d, reconnects refused %d, replays 200 %d, sessions started %d, calls ok %d",
			g.Name, c["drops"], c["reconnects_refused"], c["replays_ok"], c["sessions_started"], c["tool_calls_ok"])
		if c["reconnects_refused"] != 0 || g.Histograms["refusal_duration"].Count != 0 {
			t.Errorf("%s: %d reconnects refused: mcp-go lets a reconnect take the held stream over", g.Name, c["reconnects_refused"])
		}
	}
	if c := group(t, e, "naive").Counters; c["drops"] < 2 || c["replays_ok"] < c["drops"] {
		t.Errorf("naive: %d drops, %d replays answered 200: want every client's stream dropped and every drop resumed", c["drops"], c["replays_ok"])
	}
	// mcp-go's listener reconnects with a plain GET (it never sends Last-Event-ID): the server
	// attaches it as it attaches a resume, and the session goes on.
	g := group(t, e, "mcpgo-listen")
	if c := g.Counters; c["drops"] < int64(g.Clients) || c["sessions_started"] != int64(g.Clients) {
		t.Errorf("mcpgo-listen: %d drops, %d sessions started for %d clients: want every listener dropped and every session kept",
			c["drops"], c["sessions_started"], g.Clients)
	}
}

// The TypeScript SDK 1.32.2 answers 409 to a second GET of a session whose standalone stream
// it holds, a resume with Last-Event-ID included (webStandardStreamableHttp.js: "Conflict:
// Stream already has an active connection"), until the held socket closes: mcpchaos's clients
// are refused until the hold ends, as on the Go SDK's server.
func TestHalfOpenAgainstTSSDKServer(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	srv := peers.TS(t, peers.Options{Notify: 250 * time.Millisecond})
	groups := "  - {name: naive, clients: 2, policy: naive, call_every: 250ms}\n  - {name: probe, clients: 2, policy: probe, call_every: 250ms}"
	// The fault at 2 s: node's first sessions on a busy machine were once not up by 1 s.
	yaml := halfOpenWorkload(fmt.Sprintf("  url: %s\n  session_ttl: none", srv.URL), groups)
	e := runLibraries(t, strings.Replace(yaml, "at: 1s", "at: 2s", 1))
	refusalsEnded(t, e, "naive")
	refusalsEnded(t, e, "probe")
}

// The TS SDK's own client against its server's 409: it meets the 409 on its GET resume and
// retries on its own schedule (1 s, then 1.5 s later: maxRetries 2). The run counts each 409
// as a refused stream (reconnects_refused), never as a refused cursor (replays_unknown_cursor).
// The fault acts once, on the streams open at its time: at 3 s, so that the node workers,
// started on a busy machine, have their streams open by then.
func TestHalfOpenTSSDKClientAgainstTSSDKServer(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	needTS(t)
	srv := peers.TS(t, peers.Options{Notify: 250 * time.Millisecond})
	yaml := halfOpenWorkload(fmt.Sprintf("  url: %s\n  session_ttl: none", srv.URL),
		"  - {name: ts-sdk, clients: 2, policy: ts-sdk, call_every: 250ms}")
	e := runLibraries(t, strings.NewReplacer("at: 1s", "at: 3s").Replace(yaml))
	g := group(t, e, "ts-sdk")
	c, h := g.Counters, g.Histograms["refusal_duration"]
	t.Logf("ts-sdk: drops %d, reconnects refused %d (ended %d, lasted max %v), replays 200 %d, replays refused %d, sessions started %d, calls ok %d, not made %d",
		c["drops"], c["reconnects_refused"], h.Count, time.Duration(h.MaxUS)*time.Microsecond, c["replays_ok"], c["replays_unknown_cursor"],
		c["sessions_started"], c["tool_calls_ok"], c["calls_not_made"])
	if c["drops"] == 0 || c["reconnects_refused"] == 0 || c["replays_unknown_cursor"] != 0 {
		t.Errorf("ts-sdk: drops %d, reconnects refused %d, replays refused as an unknown cursor %d: want its streams cut and the 409s counted as refused streams only",
			c["drops"], c["reconnects_refused"], c["replays_unknown_cursor"])
	}
}
