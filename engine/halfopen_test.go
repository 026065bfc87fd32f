package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/results"
)

// The zombie stream (half_open, docs/faults.md): the fault proxy resets each GET stream's
// client side at 1 s and holds the server's side for 2 s. A server that refuses a second
// stream of a session (409: the Go SDK's, the reference server with stream_conflict) refuses
// the clients' reconnects until the hold ends; the summary's figures are the refusals and how
// long each session was locked out. Bounds are an ordering and a ceiling, nothing a busy
// machine moves: every refusal lasts less than the hold plus the clients' reconnect backoff
// cap, and a server that lets a resume take the stream over refuses nothing.
func halfOpenWorkload(target string, groups string) string {
	return fmt.Sprintf(`name: half-open
target:
%s
phases:
  - {name: active, duration: 6s, calls: true}
groups:
%s
faults:
  - {name: zombie, toxic: half_open, attributes: {hold: 2000}, at: 1s}
`, target, groups)
}

const halfOpenHold = 2 * time.Second

// refusalsEnded checks that group g's reconnects were refused and that every session's
// refusal ended within the hold and the backoff cap (5 s by default) after it.
func refusalsEnded(t *testing.T, e *results.Export, name string) {
	t.Helper()
	g := group(t, e, name)
	h := g.Histograms["refusal_duration"]
	t.Logf("%s: reconnects refused %d, refusals ended %d, lasted p50 %v max %v", name, g.Counters["reconnects_refused"], h.Count,
		time.Duration(h.P50US)*time.Microsecond, time.Duration(h.MaxUS)*time.Microsecond)
	if g.Counters["reconnects_refused"] == 0 || h.Count == 0 {
		t.Fatalf("%s: reconnects refused %d, refusals ended %d; want the held stream to refuse reconnects until the hold ended",
			name, g.Counters["reconnects_refused"], h.Count)
	}
	if max := time.Duration(h.MaxUS) * time.Microsecond; max > halfOpenHold+5*time.Second {
		t.Errorf("%s: a refusal lasted %v, past the hold (%v) and the backoff cap", name, max, halfOpenHold)
	}
}

func TestHalfOpenAgainstTheReferenceServer(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	groups := "  - {name: naive, clients: 2, policy: naive, call_every: 250ms}\n  - {name: probe, clients: 2, policy: probe, call_every: 250ms}"
	builtin := "  builtin: {session_ttl: 60s, notify_interval: 250ms, retry: 200ms, stream_conflict: %t}"
	e := runLibraries(t, halfOpenWorkload(fmt.Sprintf(builtin, true), groups))
	refusalsEnded(t, e, "naive")
	refusalsEnded(t, e, "probe")
	// By default the reference server lets a resume take the stream over: nothing refused.
	e = runLibraries(t, halfOpenWorkload(fmt.Sprintf(builtin, false), groups))
	for _, g := range e.Groups {
		if n := g.Counters["reconnects_refused"]; n != 0 || g.Counters["drops"] == 0 {
			t.Errorf("%s: %d reconnects refused, %d drops; want the resumes to take the held streams over", g.Name, n, g.Counters["drops"])
		}
	}
}

// The Go SDK server answers 409 to a GET of a session whose stream it holds (go-sdk
// streamable.go, acquireStream), a resume included: mcpchaos's own clients are refused until
// the hold ends; the Go SDK's client gives its session up at the first 409.
func TestHalfOpenAgainstGoSDKServer(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	srv := peers.GoSDK(t, peers.Options{Notify: 250 * time.Millisecond})
	groups := "  - {name: naive, clients: 2, policy: naive, call_every: 250ms}\n  - {name: gosdk, clients: 2, policy: gosdk, call_every: 250ms}"
	e := runLibraries(t, halfOpenWorkload(fmt.Sprintf("  url: %s\n  session_ttl: none", srv.URL), groups))
	refusalsEnded(t, e, "naive")
	// The Go SDK's client fails its whole connection on the 409 to its GET reconnect
	// (handleSSE: checkResponse, then fail): the application must connect a new session.
	g := group(t, e, "gosdk")
	t.Logf("gosdk: reconnects refused %d, sessions started %d", g.Counters["reconnects_refused"], g.Counters["sessions_started"])
	if g.Counters["reconnects_refused"] == 0 || g.Counters["sessions_started"] <= int64(g.Clients) {
		t.Errorf("gosdk: reconnects refused %d, sessions started %d for %d clients; want the 409 to cost the Go SDK client its session",
			g.Counters["reconnects_refused"], g.Counters["sessions_started"], g.Clients)
	}
}
