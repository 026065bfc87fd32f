package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/internal/loopback"
	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/results"
)

// `run` against the real servers a team meets (internal/peers), as a new user runs it: the
// built-in demo pointed at the server with --target, or a workload of their own. Each test
// asserts what the user must read: the figures the server's regime allows, or exit 1 with the
// cause the server gave. Bounds and causes only, never amounts a stalled machine can move.

// cli runs mcpchaos with args as a user would (the root command, its exit-code mapping) and
// returns what it printed on stdout (and the error main would print), its exit status and the
// export (nil when none was written).
func cli(t *testing.T, args ...string) (string, int, *results.Export) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr bytes.Buffer
	root := newRoot()
	root.SetArgs(append(args, "--out", out, "--progress", "off", "--formats", "none"))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		stdout.WriteString("\nmcpchaos: " + err.Error() + "\n")
	}
	var exp *results.Export
	if _, serr := os.Stat(out); serr == nil {
		if exp, serr = results.ReadFile(out); serr != nil {
			t.Fatalf("reading the export: %v", serr)
		}
	}
	return stdout.String() + stderr.String(), exitCode(err), exp
}

func mustContain(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("the output does not say %q:\n%s", w, out)
		}
	}
}

// mustRow checks that the summary has a row label whose first column says value, whatever
// the width of the label column.
func mustRow(t *testing.T, out, label, value string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, label); ok && strings.HasPrefix(strings.TrimLeft(rest, " "), value) {
			return
		}
	}
	t.Errorf("the summary has no row %q saying %q:\n%s", label, value, out)
}

// writeWorkload writes a workload file against url and returns its path.
func writeWorkload(t *testing.T, body string, url string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(p, fmt.Appendf(nil, body, url), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A URL that answers but is not an MCP server stops the run at its first request, as inspect
// does, naming what the server sent; nothing of the plan runs.
func TestRunNotMCP(t *testing.T) {
	for _, tc := range []struct {
		name, ctype, body string
		status            int
		want              string
	}{
		{"a web page", "text/html", "<html>hello</html>", 200, `content type "text/html"`},
		{"JSON under the wrong type", "text/plain", `{"jsonrpc":"2.0","id":1,"result":{}}`, 200, `content type "text/plain"`},
		{"not JSON", "application/json", "{not json", 200, "initialize got"},
		{"JSON, not JSON-RPC", "application/json", `{"hello":"world"}`, 200, "initialize got"},
		{"a server error", "text/plain", "boom", 500, "initialize got HTTP 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := loopback.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}), nil)
			out, code, exp := cli(t, "run", "seed-incident-fast", "--target", "http://"+addr+"/mcp")
			if code != exitRuntime {
				t.Fatalf("exit %d, want 1:\n%s", code, out)
			}
			mustContain(t, out, "does not answer as an MCP server", tc.want, "nothing was run")
			if exp == nil || exp.Run.Error == "" || exp.Groups[0].Counters["tool_calls_ok"] != 0 {
				t.Errorf("the export does not say why the run did not start: %+v", exp)
			}
		})
	}
}

// mcp-go with WithStateLess(true) hands out no session ids: the demo, which waits for the TTL,
// stops before it starts, naming that cause; a workload without TTL phases runs, and its
// session figures are not applicable (n/a), not zeros.
func TestRunServerWithoutSessionIDs(t *testing.T) {
	srv := peers.MCPGoStateless(t, peers.Options{})
	out, code, _ := cli(t, "run", "seed-incident-fast", "--target", srv.URL, "--session-ttl", "2s")
	if code != exitRuntime {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	mustContain(t, out, "keeps no sessions (it hands out no session ids)", "waits for the session TTL (phase quiet)")

	w := writeWorkload(t, `name: calls
target: {url: %s}
phases:
  - {name: calls, duration: 1500ms, calls: true}
groups:
  - {name: probe, clients: 3, policy: probe, call_every: 100ms, tool: lookup_order, arguments: {order_id: "o-{{seq}}", quantity: 1}}
`, srv.URL)
	out, code, exp := cli(t, "run", w)
	if code != exitOK {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	if exp.Run.Generation != "session-without-ids" {
		t.Errorf("generation %q", exp.Run.Generation)
	}
	g := group(t, exp, "probe")
	if g.Counters["tool_calls_ok"] == 0 {
		t.Errorf("no tool call succeeded: %v %v", g.Counters, g.Errors)
	}
	if g.Counters["drops"] != 0 || g.Counters["sessions_dead"] != 0 {
		t.Errorf("streams or deaths on a server without sessions (no fault was applied): %v", g.Counters)
	}
	for _, m := range []string{"sessions_started", "drops", "false_healthy_seconds", "detection_delay"} {
		if exp.Run.WithheldWhy("probe", m) != results.NotApplicable {
			t.Errorf("%s is not marked not applicable: %v", m, exp.Run.Withheld)
		}
	}
	mustRow(t, out, "sessions started", "n/a")
	if !slices.Contains(exp.Run.NotObservable["probe"], "calls_run_twice") {
		t.Errorf("calls_run_twice is not listed as not observable on a server by URL: %v", exp.Run.NotObservable)
	}
}

// The official everything server keeps its sessions without a TTL. Told so (--session-ttl
// none), the run estimates no death; told a TTL it does not have, the run sees sessions answer
// after their estimated death and withholds every figure derived from the estimate, in the
// export and the summary.
func TestRunEverythingServer(t *testing.T) {
	srv := peers.Everything(t)
	out, _, exp := cli(t, "run", "seed-incident-fast", "--target", srv.URL, "--session-ttl", "none")
	if exp == nil {
		t.Fatalf("no export:\n%s", out)
	}
	for _, g := range exp.Groups {
		if g.Counters["sessions_dead"] != 0 || g.FalseHealthySeconds != 0 || g.Histograms["detection_delay"].Count != 0 {
			t.Errorf("group %s: deaths on a server without a TTL: %v false-healthy %.1f", g.Name, g.Counters, g.FalseHealthySeconds)
		}
	}
	mustContain(t, strings.Join(exp.Run.Notes, "\n"), "session_ttl: none")

	out, _, exp = cli(t, "run", "seed-incident-fast", "--target", srv.URL, "--session-ttl", "2s")
	if exp == nil {
		t.Fatalf("no export:\n%s", out)
	}
	for _, g := range exp.Groups {
		if why := exp.Run.WithheldWhy(g.Name, "false_healthy_seconds"); why != results.EstimateRefuted {
			t.Errorf("group %s: false_healthy_seconds %.1f not withheld (%q) though the server refuted the TTL", g.Name, g.FalseHealthySeconds, why)
		}
	}
	mustRow(t, out, "false-healthy seconds", "withheld (estimate refuted)")
}

// mcp-go's default mode hands out ids it never checks: a made-up id is served as alive. The
// run says so, withholds what it estimated from the declared TTL, and fails on what it could
// not measure (no stream carries an event id), naming the tools that say they stream.
func TestRunSilentSubstitution(t *testing.T) {
	srv := peers.MCPGoIDs(t, peers.Options{SessionTTL: 2e9})
	out, code, exp := cli(t, "run", "seed-incident-fast", "--target", srv.URL, "--session-ttl", "2s")
	if code != exitRuntime || exp == nil {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	mustContain(t, strings.Join(exp.Run.Notes, "\n"), "silent substitution")
	mustContain(t, out, "no client held a cursor", "report_progress")
}

// The same mode with an event store, as a team that wants resumption configures it: streams
// carry ids, clients hold cursors and resume, and every replay and every POST is answered as a
// live session's, whether the session the run estimates dead is dead or not. Nothing the
// server says can tell a stale event from a live one, so the figures drawn from estimated
// deaths are withheld with that reason in the summary, the export, the CSV and thresholds;
// what the server did answer (tool calls) is shown; and the demo, which waits for the TTL,
// cannot pass: exit 1 with the reason, the same on every run.
func TestRunServesAnyIDWithheld(t *testing.T) {
	srv := peers.MCPGoIDsStore(t, peers.Options{SessionTTL: 2e9})
	out, code, exp := cli(t, "run", "seed-incident-fast", "--target", srv.URL, "--session-ttl", "2s")
	if code != exitRuntime || exp == nil {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	mustContain(t, out, "the target serves any session id as live")
	mustRow(t, out, "stale events applied", "withheld (server serves any id)")
	mustRow(t, out, "false-healthy seconds", "withheld (server serves any id)")
	for _, g := range exp.Groups {
		for _, m := range []string{"false_healthy_seconds", "stale_events_applied", "sessions_dead", "detection_delay"} {
			if why := exp.Run.WithheldWhy(g.Name, m); why != results.ServesAnyID {
				t.Errorf("group %s: %s withheld %q, want %q", g.Name, m, why, results.ServesAnyID)
			}
		}
		if g.Counters["tool_calls_ok"] == 0 {
			t.Errorf("group %s: no tool call measured: %v", g.Name, g.Counters)
		}
	}
	th, err := gate.ParseThreshold("probe.false_healthy_seconds <= 1000")
	if err != nil {
		t.Fatal(err)
	}
	if r := results.JudgeThreshold(th, exp); r.Pass || !strings.Contains(r.Actual, results.ServesAnyID) {
		t.Errorf("a threshold on a withheld figure was judged: %+v", r)
	}
	var csvOut bytes.Buffer
	if err := results.WriteCSV(&csvOut, exp); err != nil {
		t.Fatal(err)
	}
	mustContain(t, csvOut.String(), "probe,probe,false_healthy_seconds,,s,"+results.ServesAnyID)
}

// A tool the server does not offer, named in the user's workload, is an error at its line
// listing the tools offered; arguments the tool's schema refuses too, unless told to skip the
// check. Nothing runs.
func TestRunChecksToolsAtStart(t *testing.T) {
	srv := peers.MCPGo(t, peers.Options{})
	body := `name: mine
target: {url: %s}
phases:
  - {name: calls, duration: 1s, calls: true}
groups:
  - name: probe
    clients: 2
    policy: probe
    tool: %s
`
	w := writeWorkload(t, strings.Replace(body, "tool: %s", "tool: search_orders", 1), srv.URL)
	out, code, exp := cli(t, "run", w)
	if code != exitUsage || exp != nil {
		t.Fatalf("exit %d (export %t), want 2 and no export:\n%s", code, exp != nil, out)
	}
	mustContain(t, out, w+":9:11: group probe: tool \"search_orders\" is not offered", "lookup_order, report_progress, slow_query")

	w = writeWorkload(t, strings.Replace(body, "tool: %s", "tool: lookup_order\n    arguments: {order_id: 7}", 1), srv.URL)
	out, code, _ = cli(t, "run", w)
	if code != exitUsage {
		t.Fatalf("exit %d, want 2:\n%s", code, out)
	}
	mustContain(t, out, w+":10:16: group probe: the arguments do not fit tool lookup_order's inputSchema", "--no-schema-check")
	if out, code, _ = cli(t, "run", w, "--no-schema-check"); code == exitUsage {
		t.Errorf("--no-schema-check still refused the arguments:\n%s", out)
	}
	// --tool and --tool-args override every group of a workload, checked the same way.
	out, code, _ = cli(t, "run", w, "--tool", "nope")
	if code != exitUsage {
		t.Fatalf("exit %d, want 2:\n%s", code, out)
	}
	mustContain(t, out, `--tool: group probe: tool "nope" is not offered`)
	if out, code, _ = cli(t, "run", w, "--tool", "lookup_order", "--tool-args", `{"order_id": "o-{{seq}}", "quantity": 2}`); code != exitOK {
		t.Errorf("exit %d with valid --tool-args:\n%s", code, out)
	}
}

// The TypeScript SDK's older examples answer 400 to a dead session. With the default
// dead_statuses (404, 410) the clients cannot see their sessions die: after the TTL their
// calls keep failing (the probe group's replays are refused, its probes ambiguous) and the run
// fails on the calls phase it could not measure, naming the cause the preflight saw; told
// --dead-statuses as inspect advises, the cause is gone and deaths are detected. The story is
// the built-in demo's, with fewer clients (a loaded machine keeps it).
func TestRunDeadSessions400(t *testing.T) {
	srv := peers.TS400(t, peers.Options{SessionTTL: 2e9, Notify: 250e6})
	w := writeWorkload(t, `name: seed-400
target: {url: %s, session_ttl: 2s}
phases:
  - {name: active, duration: 1s, calls: true}
  - {name: quiet, duration: ttl+3.5s, calls: false}
  - {name: after-ttl, duration: 2.5s, calls: true}
groups:
  - {name: naive, policy: naive, clients: 5, ramp: 500ms, call_every: 400ms, retries: 3, retry_backoff: 20ms, concurrency: 2}
  - {name: probe, policy: probe, probe: ping, clients: 5, ramp: 500ms, call_every: 400ms, retries: 3, retry_backoff: 20ms, concurrency: 2}
faults:
  - {name: lb-idle-timeout, toxic: idle_timeout, attributes: {timeout: 100}, at: 1.2s, for: 400ms}
  - {name: proxy-restart, toxic: down, at: 1.8s, for: 4.2s}
`, srv.URL)
	out, code, exp := cli(t, "run", w)
	if code != exitRuntime || exp == nil {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	mustContain(t, out, "phase after-ttl:", "answered 400 to dead sessions", "--dead-statuses 404,410,400")
	out, _, exp = cli(t, "run", w, "--dead-statuses", "400,404,410")
	if exp == nil {
		t.Fatalf("no export:\n%s", out)
	}
	if strings.Contains(out, "answered 400 to dead sessions") {
		t.Errorf("with dead_statuses [400] the run still blames the 400:\n%s", out)
	}
	if g := group(t, exp, "probe"); g.Counters["sessions_dead_detected"] == 0 {
		t.Errorf("with dead_statuses [400] the probe group detected no death: %v", g.Counters)
	}
}

// The Go SDK's stateless server speaks 2026-07-28 beside the session family, where it hands
// out no session ids: the demo, which waits for a TTL, stops before it starts. A workload
// whose clients speak 2026-07-28 (protocol:) runs it: calls cut by an outage are lost in
// flight and re-issued, and every call the server ran twice (it counts executions per logical
// call: a fact) was a lost request re-issued.
func TestRunStatelessRevision(t *testing.T) {
	srv := peers.GoSDKStateless(t, peers.Options{})
	out, code, _ := cli(t, "run", "seed-incident-fast", "--target", srv.URL, "--session-ttl", "2s")
	if code != exitRuntime {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	mustContain(t, out, "keeps no sessions (it hands out no session ids)", "waits for the session TTL")

	w := writeWorkload(t, `name: stateless
target: {url: %s}
phases:
  - {name: calls, duration: 2500ms, calls: true}
groups:
  - {name: naive, clients: 4, policy: naive, call_every: 100ms, retries: 8, retry_backoff: 100ms, request_timeout: 3s,
     protocol: 2026-07-28, tool: slow_query, arguments: {query: "q-{{seq}}", delay_ms: 400}}
faults:
  - {name: out, toxic: down, at: 800ms, for: 400ms}
`, srv.URL)
	out, _, exp := cli(t, "run", w)
	if exp == nil {
		t.Fatalf("no export:\n%s", out)
	}
	if exp.Run.Generation != "stateless" || exp.Run.NegotiatedProtocol != "2026-07-28" {
		t.Errorf("generation %q protocol %q", exp.Run.Generation, exp.Run.NegotiatedProtocol)
	}
	c := group(t, exp, "naive").Counters
	st := srv.Stats()
	if c["requests_lost"] == 0 || c["requests_reissued"] == 0 || c["tool_calls_ok"] == 0 {
		t.Errorf("an outage cut calls in flight, yet: %v", c)
	}
	if st.Duplicates == 0 || st.Duplicates > c["requests_reissued"] || st.Duplicates > c["requests_lost"] {
		t.Errorf("the server ran %d calls twice; the run re-issued %d of %d lost: every duplicate must be a lost call re-issued",
			st.Duplicates, c["requests_reissued"], c["requests_lost"])
	}
	if exp.Run.WithheldWhy("naive", "sessions_started") != results.NotApplicable {
		t.Errorf("session figures not marked n/a: %v", exp.Run.Withheld)
	}
}

// Every tool call names its logical call, so the reference server knows a call it ran twice:
// calls whose answers an outage cut are retried after it and run again, which the export
// counts as calls_run_twice, a fact; a server given by URL does not say, and the counter is
// listed as not observable there.
func TestRunCountsCallsRunTwice(t *testing.T) {
	w := writeWorkload(t, `name: twice%.0s
target: {builtin: {session_ttl: 1m}}
phases:
  - {name: calls, duration: 2500ms, calls: true}
groups:
  - {name: naive, clients: 4, policy: naive, tool: slow, call_every: 100ms, retries: 6, retry_backoff: 150ms}
faults:
  - {name: out, toxic: down, at: 800ms, for: 300ms}
`, "")
	out, _, exp := cli(t, "run", w)
	if exp == nil {
		t.Fatalf("no export:\n%s", out)
	}
	if n := group(t, exp, "naive").Counters["calls_run_twice"]; n == 0 {
		t.Errorf("calls_run_twice = 0, though an outage cut slow calls in flight and they were retried: %v", group(t, exp, "naive").Counters)
	}
	if exp.Run.NotObservable["naive"] != nil {
		t.Errorf("not_observable on the reference server: %v", exp.Run.NotObservable)
	}
}

// A server that opens sessions but breaks every tool call (a reply under the wrong type, a
// body that is not JSON-RPC, a connection reset mid-reply) makes a run that measured nothing:
// it fails, naming what the server sent, instead of passing with zeros.
func TestRunMeasuredNothing(t *testing.T) {
	srv := peers.MCPGo(t, peers.Options{})
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		break_ func(w http.ResponseWriter)
		want   string
	}{
		{"wrong content type", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
		}, `content type "text/plain"`},
		{"not JSON-RPC", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"hello":"world"}`))
		}, "protocol"},
		{"reset mid-reply", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			_, _ = w.Write([]byte("id: 1\ndata: {\"jsonrpc\":"))
			panic(http.ErrAbortHandler) // net/http resets the connection
		}, "reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy := httputil.NewSingleHostReverseProxy(target)
			addr := loopback.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					if bytes.Contains(body, []byte(`"tools/call"`)) {
						tc.break_(w)
						return
					}
				}
				proxy.ServeHTTP(w, r)
			}), nil)
			w := writeWorkload(t, `name: broken
target: {url: %s}
phases:
  - {name: calls, duration: 1s, calls: true}
groups:
  - {name: probe, clients: 2, policy: probe, call_every: 100ms, retries: 1, retry_backoff: 10ms, tool: lookup_order, arguments: {order_id: "a", quantity: 1}}
`, "http://"+addr+"/mcp")
			out, code, _ := cli(t, "run", w)
			if code != exitRuntime {
				t.Fatalf("exit %d, want 1:\n%s", code, out)
			}
			mustContain(t, out, "problem: group probe:")
			if !strings.Contains(out, "no tool call succeeded") && !strings.Contains(out, "refused by the server") {
				t.Errorf("the problem does not say that no call succeeded:\n%s", out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("the output does not name what the server sent (%q):\n%s", tc.want, out)
			}
		})
	}
}
