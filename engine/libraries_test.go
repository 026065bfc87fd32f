package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/mcpgoworker"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/tsworker"
	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// The client libraries, each run for real under one fault (a proxy outage that outlasts the
// session TTL, with tool calls in flight), against the reference server in the seed's regime
// and with a GET that validates the session, and against the real SDK servers of
// internal/peers. What is asserted is what each library does, qualitatively (its error classes,
// whether it re-initialized, hung or polled the dead session), with bounds no busy machine
// moves; each assertion fails if the group were run by mcpchaos's own wire client, which has
// none of these classes and records no library.

// needTS skips a test of the TypeScript kinds where node or the worker's packages are missing
// (mcpchaos setup ts-libraries), and fails it under CI=true, where .ci/run installs them.
func needTS(t *testing.T) {
	t.Helper()
	for _, kind := range []string{policy.ClientTSSDK, policy.ClientTSClient} {
		if err := tsworker.Check(kind); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip(err)
	}
}

// libraryWorkload is the scenario: TTL 1 s, calls for 4 s (node workers on a loaded machine
// take seconds to connect their clients), the proxy down from 3.7 s to 6.5 s (the sessions
// die behind it at about 4.7 s), calls again from 7 s for 12 s. Calls time out
// after 4 s in every library. The last phase is long for what it must show (one call on the
// dead session, one new session): on a machine so loaded that node answers slowly (a load
// average of 40 was seen), a call cut at the outage still hangs well into it.
func libraryWorkload(target, tool, args string) string {
	return fmt.Sprintf(`name: libraries
target:
%s
phases:
  - {name: active, duration: 4s, calls: true}
  - {name: outage, duration: 3s, calls: false}
  - {name: after, duration: 12s, calls: true}
x-group: &g {clients: 2, ramp: 400ms, call_every: 200ms, concurrency: 2, tool: %s, request_timeout: 4s%s}
groups:
  - {<<: *g, name: gosdk, policy: gosdk}
  - {<<: *g, name: mcpgo, policy: mcpgo}
  - {<<: *g, name: ts-sdk, policy: ts-sdk, library_options: {timeout: 4000}}
  - {<<: *g, name: ts-client, policy: ts-client, library_options: {timeout: 4000}}
faults:
  - {name: outage, toxic: down, at: 3.7s, for: 2.8s}
`, target, tool, args)
}

func runLibraries(t *testing.T, yaml string) *results.Export {
	t.Helper()
	w, err := workloads.Parse("libraries.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(w)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := Run(context.Background(), plan, WithStderr(testWriter{t}))
	if exp == nil {
		t.Fatalf("no export: %v", err)
	}
	// A run whose problems say it could not measure is still read: what matters here is what
	// each library did.
	var b strings.Builder
	_ = results.WriteMatrix(&b, exp, true)
	t.Logf("%v\n%s", err, b.String())
	return exp
}

// libraryGroup checks what every library group must show, and returns its counters and error
// classes.
func libraryGroup(t *testing.T, e *results.Export, name, library string) (map[string]int64, map[string]int64) {
	t.Helper()
	g := group(t, e, name)
	lib, ok := e.Run.Libraries[name]
	if !ok || lib.Name != library || lib.Version == "" || lib.NegotiatedProtocol != "2025-11-25" {
		t.Errorf("%s: library %+v, want %s at a version, pinned to 2025-11-25", name, lib, library)
	}
	c := g.Counters
	if c["sessions_dead"] == 0 || c["sessions_started"] <= int64(g.Clients) {
		t.Errorf("%s: no death met, or no new session after it: %v", name, c)
	}
	return c, lib.ErrorClasses
}

func TestLibrariesSeedRegime(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	needTS(t)
	e := runLibraries(t, libraryWorkload(`  builtin: {session_ttl: 1s, retention: 30s, get_validation: permissive, notify_interval: 200ms, retry: 0s}`, "slow", ""))

	// The Go SDK reopens its GET after the outage, on its own, to the dead session (with
	// Last-Event-ID when its stream had an event id by the cut); the next call's 404 is
	// ErrSessionMissing.
	c, cl := libraryGroup(t, e, "gosdk", "github.com/modelcontextprotocol/go-sdk")
	if c["dead_session_background_requests"] == 0 || cl["ErrSessionMissing"] == 0 {
		t.Errorf("gosdk: want a GET of its own to the dead session and ErrSessionMissing: %v %v", c, cl)
	}
	// mcp-go has no listener by default and never resumes: nothing of its own to the dead
	// session, no hang; the 404 is ErrSessionTerminated.
	c, cl = libraryGroup(t, e, "mcpgo", "github.com/mark3labs/mcp-go")
	if c["dead_session_background_requests"] != 0 || c["calls_hung"] != 0 || cl["ErrSessionTerminated"] == 0 {
		t.Errorf("mcpgo: %v %v", c, cl)
	}
	ts404(t, e)
}

// ts404 checks how the TypeScript SDKs name a session's 404: 1.x a StreamableHTTPError
// carrying the status, 2.x "not implemented", a death misclassified.
func ts404(t *testing.T, e *results.Export) {
	t.Helper()
	c, cl := libraryGroup(t, e, "ts-sdk", "@modelcontextprotocol/sdk")
	if cl["StreamableHTTPError(404)"] == 0 {
		t.Errorf("ts-sdk: %v %v", c, cl)
	}
	c, cl = libraryGroup(t, e, "ts-client", "@modelcontextprotocol/client")
	if cl["SdkHttpError(CLIENT_HTTP_NOT_IMPLEMENTED)"] == 0 || c["errors_misclassified"] == 0 {
		t.Errorf("ts-client: %v %v", c, cl)
	}
}

func TestLibrariesStrictGET(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	needTS(t)
	e := runLibraries(t, libraryWorkload(`  builtin: {session_ttl: 1s, retention: 30s, get_validation: strict, notify_interval: 200ms, retry: 0s}`, "slow", ""))

	// The Go SDK's GET after the outage meets the 404, never a 200 replay.
	c, cl := libraryGroup(t, e, "gosdk", "github.com/modelcontextprotocol/go-sdk")
	if c["dead_session_background_requests"] == 0 || c["replays_ok"] != 0 {
		t.Errorf("gosdk: want its GET to the dead session answered 404, never a 200 replay: %v %v", c, cl)
	}
	c, cl = libraryGroup(t, e, "mcpgo", "github.com/mark3labs/mcp-go")
	if c["calls_hung"] != 0 || cl["ErrSessionTerminated"] == 0 {
		t.Errorf("mcpgo: %v %v", c, cl)
	}
	ts404(t, e)
}

// Against the TypeScript SDK's own server, with calls that run 3 s (slow_query): a call in
// flight when the proxy goes down is cut mid-stream. The TypeScript SDK 1.x tries to resume
// it twice, gives up silently and lets the call wait for its timeout, by then on a dead
// session: a hang, misclassified as a timeout. mcp-go fails such a call at once.
func TestLibrariesAgainstTSServer(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	needTS(t)
	srv := peers.TS(t, peers.Options{SessionTTL: 1e9})
	e := runLibraries(t, libraryWorkload(fmt.Sprintf("  url: %s\n  session_ttl: 1s", srv.URL), "slow_query",
		`, arguments: {query: "q", delay_ms: 3000}`))
	c, cl := libraryGroup(t, e, "ts-sdk", "@modelcontextprotocol/sdk")
	if c["calls_hung"] == 0 || cl["McpError(-32001)"] == 0 || c["errors_misclassified"] == 0 {
		t.Errorf("ts-sdk: want a call hung to its timeout on a dead session, misclassified: %v %v", c, cl)
	}
	c, cl = libraryGroup(t, e, "mcpgo", "github.com/mark3labs/mcp-go")
	if c["calls_hung"] != 0 || cl["ErrSessionTerminated"] == 0 {
		t.Errorf("mcpgo: %v %v", c, cl)
	}
}

// substitutionWorkload: library clients call, idle past the TTL (and past mcp-go's sweeper,
// which ends an idle session up to max(TTL/2, 1 s) after it), then call again with the id
// they hold. No fault: the session's death is the server's TTL alone.
func substitutionWorkload(url string) string {
	return fmt.Sprintf(`name: substitution
target:
  url: %s
  session_ttl: 1s
phases:
  - {name: active, duration: 1.5s, calls: true}
  - {name: idle, duration: 3.5s, calls: false}
  - {name: again, duration: 2s, calls: true}
x-group: &g {clients: 2, call_every: 250ms, tool: lookup_order, arguments: {order_id: "o-1", quantity: 1}, request_timeout: 4s}
groups:
  - {<<: *g, name: gosdk, policy: gosdk, library_options: {DisableStandaloneSSE: true}}
  - {<<: *g, name: mcpgo, policy: mcpgo}
`, url)
}

// mcp-go's server in its default mode hands out ids and keeps no record of them: a session it
// ended at its idle TTL is served 200 under the same id, as a fresh session. The run's
// preflight finds that the server serves an id it never issued, so a success after the
// session's death (estimated from the TTL) is a silent substitution; both libraries take it
// as their live session's answer. A wire client in their place counts none: the counter is
// the library inside view's.
func TestLibrariesSilentSubstitution(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	srv := peers.MCPGoIDs(t, peers.Options{SessionTTL: time.Second})
	e := runLibraries(t, substitutionWorkload(srv.URL))
	for _, name := range []string{"gosdk", "mcpgo"} {
		g := group(t, e, name)
		if _, ok := e.Run.Libraries[name]; !ok {
			t.Errorf("%s: no library recorded", name)
		}
		if c := g.Counters; c["silent_substitutions"] == 0 || c["tool_calls_ok"] == 0 {
			t.Errorf("%s: want calls on the dead id served 200 counted as silent substitutions: %v", name, c)
		}
		// Its successes refute no estimate, yet nothing can check the estimate either: the
		// figures drawn from it are withheld for that reason, not as refuted.
		if why := e.Run.WithheldWhy(name, "sessions_dead"); why != results.ServesAnyID {
			t.Errorf("%s: sessions_dead withheld %q, want %q: a server that serves any id can neither refute nor confirm an estimated death", name, why, results.ServesAnyID)
		}
	}
}

// The same against mcp-go's stateful server, which answers an ended session 404: the libraries
// meet the death (the Go SDK's ErrSessionMissing, mcp-go's ErrSessionTerminated), and no dead
// id is ever served, so silent_substitutions must stay 0.
func TestLibrariesNoSubstitution(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	srv := peers.MCPGo(t, peers.Options{SessionTTL: time.Second})
	e := runLibraries(t, substitutionWorkload(srv.URL))
	for _, name := range []string{"gosdk", "mcpgo"} {
		c := group(t, e, name).Counters
		if c["silent_substitutions"] != 0 {
			t.Errorf("%s: %d silent substitutions from a server that answers a dead session 404", name, c["silent_substitutions"])
		}
		if c["sessions_dead"] == 0 || c["sessions_started"] <= 2 {
			t.Errorf("%s: want the idle sessions met dead and replaced: %v", name, c)
		}
	}
}

// cutCallWorkload is the matrix's scenario (matrix/scenario.yaml), shortened for CI:
// every client's first call (slow_query, 4 s) starts before the outage at 3.5 s (node
// workers on a loaded machine take seconds to connect) and is cut mid-call; the TTL (4.5 s)
// outlasts a call, so only the outage lets a session die (by 10.3 s, mcp-go's sweeper
// included), and the proxy comes back at 11 s. The Go libraries wait 25 s for a call (the Go
// SDK resumes a cut call within about 20 s of the cut, its reconnects' full jitter); the
// TypeScript SDKs 5 s, their 2 default reconnects failing within the outage. One request
// loop a client, so that no second call races the first 404.
func cutCallWorkload(url string) string {
	return fmt.Sprintf(`name: cut-call
target:
  url: %s
  session_ttl: 4500ms
phases:
  - {name: active, duration: 3.5s, calls: true}
  - {name: outage, duration: 8.5s, calls: false}
  - {name: after, duration: 14s, calls: true}
x-group: &g {clients: 2, ramp: 400ms, call_every: 200ms, concurrency: 1, tool: slow_query, arguments: {query: q, delay_ms: 4000}, request_timeout: 25s}
groups:
  - {<<: *g, name: gosdk, policy: gosdk}
  - {<<: *g, name: mcpgo, policy: mcpgo}
  - {<<: *g, name: ts-sdk, policy: ts-sdk, library_options: {timeout: 5000}}
  - {<<: *g, name: ts-client, policy: ts-client, library_options: {timeout: 5000}}
faults:
  - {name: outage, toxic: down, at: 3.5s, for: 7.5s}
`, url)
}

// The seed's regime in a real SDK server: mcp-go's, with an event log that outlives its
// sessions (its GET replays a dead session's log with 200), each library with a call cut by
// the outage: the Go SDK reconnects its GET to the dead session and takes the 200 replay;
// mcp-go fails the cut call at once and names the 404 ErrSessionTerminated.
// The TypeScript SDKs are held only to their 404 classes here: whether their cut call can
// resume is the server's draw (mcp-go answers a call as JSON until a notification comes its
// way, and its notifications go to the GET listener or to the call's stream, whichever takes
// them), so their hang is asserted against the servers that always stream.
func TestLibrariesAgainstRetainedMCPGo(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	needTS(t)
	// Its notifications every 250 ms turn a call's answer into an SSE stream with event ids
	// (mcp-go answers JSON until a handler has something to stream): a cut call can resume.
	srv := peers.MCPGoRetained(t, peers.Options{SessionTTL: 4500 * time.Millisecond, Notify: 250 * time.Millisecond})
	e := runLibraries(t, cutCallWorkload(srv.URL))
	c, cl := libraryGroup(t, e, "gosdk", "github.com/modelcontextprotocol/go-sdk")
	// Its GET takes the dead session's log replayed with 200, the seed's trap. (Whether a cut
	// call also comes back with the dead session's stored answer depends on whether mcp-go
	// had streamed that call, the draw described below; the matrix's servers always stream.)
	if c["replays_ok"] == 0 || c["dead_session_background_requests"] == 0 || c["calls_hung"] != 0 {
		t.Errorf("gosdk: want its GET to the dead session answered by a 200 replay, and no hang: %v %v", c, cl)
	}
	c, cl = libraryGroup(t, e, "mcpgo", "github.com/mark3labs/mcp-go")
	if c["calls_hung"] != 0 || c["replayed_errors_delivered"] != 0 || c["dead_session_background_requests"] != 0 ||
		cl["ErrSessionTerminated"] == 0 || cl["transport.Error"] == 0 {
		t.Errorf("mcpgo: want the cut call failed at once, nothing sent of its own, the 404 ErrSessionTerminated: %v %v", c, cl)
	}
	ts404(t, e)
}

// tsHung checks both TypeScript SDKs under a cut call: hung to their timeout on a dead
// session and misclassified as a timeout, their listener gone silently, the 404 named by
// each its own way.
func tsHung(t *testing.T, e *results.Export) {
	t.Helper()
	c, cl := libraryGroup(t, e, "ts-sdk", "@modelcontextprotocol/sdk")
	if c["calls_hung"] == 0 || c["errors_misclassified"] == 0 || cl["McpError(-32001)"] == 0 || cl["StreamableHTTPError(404)"] == 0 {
		t.Errorf("ts-sdk: want the cut call hung to its timeout, misclassified, then a 404 StreamableHTTPError: %v %v", c, cl)
	}
	c, cl = libraryGroup(t, e, "ts-client", "@modelcontextprotocol/client")
	if c["calls_hung"] == 0 || cl["SdkError(REQUEST_TIMEOUT)"] == 0 || cl["SdkHttpError(CLIENT_HTTP_NOT_IMPLEMENTED)"] == 0 {
		t.Errorf("ts-client: want the cut call hung to its timeout, then the 404 as not implemented: %v %v", c, cl)
	}
}

// A GET-validating real server: the Go SDK's (its GET answers a dead session 404). The Go
// SDK's own reconnect meets the 404 and no 200 replay ever comes, so no dead session's answer
// is delivered; mcp-go and the TypeScript SDKs do what they do anywhere.
func TestLibrariesAgainstGoSDKServer(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	needTS(t)
	srv := peers.GoSDK(t, peers.Options{SessionTTL: 4500 * time.Millisecond})
	e := runLibraries(t, cutCallWorkload(srv.URL))
	c, cl := libraryGroup(t, e, "gosdk", "github.com/modelcontextprotocol/go-sdk")
	if c["replays_ok"] != 0 || c["replayed_errors_delivered"] != 0 || c["dead_session_background_requests"] == 0 {
		t.Errorf("gosdk: want its reconnects to the dead session answered 404, never a 200 replay: %v %v", c, cl)
	}
	c, cl = libraryGroup(t, e, "mcpgo", "github.com/mark3labs/mcp-go")
	if c["calls_hung"] != 0 || cl["ErrSessionTerminated"] == 0 {
		t.Errorf("mcpgo: %v %v", c, cl)
	}
	tsHung(t, e)
}

// needMCPGo16 skips a test of mcp-go v1.6.0's kind where its worker is not built (mcpchaos
// setup go-libraries), and fails it under CI=true, where .ci/run builds it.
func needMCPGo16(t *testing.T) {
	t.Helper()
	if err := mcpgoworker.Check(policy.ClientMCPGo16); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// Both pinned versions of mcp-go, side by side, each with a call cut mid-stream by the outage
// and its session dead behind it (the reference server in the seed regime, TTL 2.5 s: a 2 s
// call does not outlive it, the 3.8 s outage does). Neither
// re-initializes by itself: the 404 is ErrSessionTerminated in both. The cut call fails at
// once in both, but named as each version names it: v1.2.1 "unexpected nil response", a bare
// transport.Error; v1.6.0 with the stream's own words, "SSE stream error" (the stream broke
// off) or "SSE stream ended without a response" (it ended cleanly before the answer). (A
// call sent as the proxy goes down is refused, a bare transport.Error in both.) A run by any
// one library, or by mcpchaos's wire client, fails it.
func TestLibrariesMCPGoVersions(t *testing.T) {
	needMCPGo16(t)
	e := runLibraries(t, `name: mcpgo-versions
target:
  builtin: {session_ttl: 2500ms, retention: 30s, get_validation: permissive, notify_interval: 200ms, retry: 0s}
phases:
  - {name: active, duration: 3s, calls: true}
  - {name: outage, duration: 4s, calls: false}
  - {name: after, duration: 4s, calls: true}
x-group: &g {clients: 2, ramp: 300ms, call_every: 200ms, concurrency: 1, tool: slow, arguments: {steps: 8, step_ms: 250}, request_timeout: 4s}
groups:
  - {<<: *g, name: gosdk, policy: gosdk}
  - {<<: *g, name: mcpgo, policy: mcpgo}
  - {<<: *g, name: mcpgo16, policy: mcpgo-v1.6}
faults:
  - {name: outage, toxic: down, at: 2.7s, for: 3.8s}
`)
	for _, name := range []string{"mcpgo", "mcpgo16"} {
		c, cl := libraryGroup(t, e, name, "github.com/mark3labs/mcp-go")
		if cl["ErrSessionTerminated"] == 0 || c["calls_hung"] != 0 || c["dead_session_background_requests"] != 0 {
			t.Errorf("%s: want the cut call failed at once, nothing sent of its own, the 404 ErrSessionTerminated: %v %v", name, c, cl)
		}
	}
	old, cur := e.Run.Libraries["mcpgo"], e.Run.Libraries["mcpgo16"]
	if old.Version != "v1.2.1" || cur.Version != "v1.6.0" {
		t.Errorf("versions %q and %q, want v1.2.1 (in process) and v1.6.0 (its worker)", old.Version, cur.Version)
	}
	sse := func(cl map[string]int64) (n int64) {
		for k, v := range cl {
			if strings.HasPrefix(k, "transport.Error(SSE stream") {
				n += v
			}
		}
		return n
	}
	if old.ErrorClasses["transport.Error"] == 0 || sse(old.ErrorClasses) != 0 {
		t.Errorf("mcpgo v1.2.1: want its cut call's bare transport.Error: %v", old.ErrorClasses)
	}
	if sse(cur.ErrorClasses) == 0 {
		t.Errorf("mcpgo v1.6.0: want its cut call named by the stream's end (SSE stream ...): %v", cur.ErrorClasses)
	}
	// The Go SDK beside them, as a plain application sees it: after ErrSessionMissing (its
	// POST met the 404; this regime's GET replays with 200, so the POST meets it first) the
	// session is closed, and the next request is refused in the client (ErrConnectionClosed,
	// "client is closing"), once after each signal; never taken for a server's answer.
	c, cl := libraryGroup(t, e, "gosdk", "github.com/modelcontextprotocol/go-sdk")
	if cl["ErrSessionMissing"] == 0 || cl["ErrConnectionClosed(client is closing)"] != cl["ErrSessionMissing"] || cl["jsonrpc.Error"] != 0 {
		t.Errorf("gosdk: want each ErrSessionMissing followed by \"client is closing\": %v %v", c, cl)
	}
}
