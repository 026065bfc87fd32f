package fleet

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/loopback"
	"github.com/mcpchaos/mcpchaos/metrics"
)

type echoIn struct {
	Text string `json:"text"`
}

// startSDKServerWithDeaths serves the official Go SDK's streamable handler on loopback:
// stateful, with an idle SessionTimeout and an in-memory event store, as a real deployment
// would run it; with the server's own record of each session's death: the moment it first refused the session's id (404), recorded before the refusal is
// sent. The session died at or before it, so a stream opened after it that the server still
// answered 200 would be a real replay of a dead session, whatever the machine's load; an
// estimate from the client's side (the TTL from its last success) runs ahead of the SDK's
// own idle timer, which a loaded machine fires late.
func startSDKServerWithDeaths(t *testing.T, ttl time.Duration) (string, truth.Func) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk-under-test", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{SessionTimeout: ttl, EventStore: mcp.NewMemoryEventStore(nil)})
	var deaths sync.Map // session id -> time.Time of its first 404
	rec := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&deathWriter{ResponseWriter: w, id: r.Header.Get("Mcp-Session-Id"), deaths: &deaths}, r)
	})
	dead := truth.Func(func(id string) (time.Time, bool) {
		v, ok := deaths.Load(id)
		if !ok {
			return time.Time{}, false
		}
		return v.(time.Time), true
	})
	return "http://" + loopback.Serve(t, rec, nil) + "/mcp", dead
}

// deathWriter records the first 404 the server sends for a session id.
type deathWriter struct {
	http.ResponseWriter
	id     string
	deaths *sync.Map
}

func (d *deathWriter) WriteHeader(code int) {
	if code == http.StatusNotFound && d.id != "" {
		d.deaths.LoadOrStore(d.id, time.Now())
	}
	d.ResponseWriter.WriteHeader(code)
}

func (d *deathWriter) Flush() {
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Both policies against the official Go SDK server, through embedded Toxiproxy: an idle
// timeout cuts the GET streams while calls run, the sessions then idle past the SDK's
// SessionTimeout, and calls resume. Nothing here assumes the reference server's behaviour.
//
// The phases move on when what they wait for has happened (calls made, streams dropped,
// deaths detected), not at set times: on a busy machine the test takes longer, and asserts
// the same.
func TestPoliciesAgainstGoSDKServer(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	const ttl = 500 * time.Millisecond
	sdkURL, deaths := startSDKServerWithDeaths(t, ttl)
	u, _ := url.Parse(sdkURL)

	inj, err := faults.NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()

	ctx := context.Background()
	var callsOn atomic.Bool
	calls := func(time.Duration) bool { return callsOn.Load() }
	type group struct {
		fleet *Fleet
		rec   *metrics.Recorder
		proxy string
	}
	var groups []group
	lb := faults.Toxic{Name: "lb", Type: "idle_timeout", Attributes: map[string]any{"timeout": 60}}
	for _, name := range []string{"naive", "probe"} {
		listen, err := inj.AddProxy(ctx, name, u.Host)
		if err != nil {
			t.Fatal(err)
		}
		if err := inj.AddToxic(ctx, name, lb); err != nil {
			t.Fatal(err)
		}
		ep := endpoint((&url.URL{Scheme: "http", Host: listen, Path: u.Path}).String())
		pol, _ := policy.New(name, policy.Config{Retries: 3})
		rec := metrics.NewRecorder(name, name, 6)
		f := New(GroupConfig{
			Name: name, Clients: 6, Ramp: 50 * time.Millisecond, Policy: pol, Probe: "ping",
			DeadStatuses: []int{404, 410}, RetryBackoff: 10 * time.Millisecond,
			CallEvery: 100 * time.Millisecond, Tool: "echo", Concurrency: 2,
			ReconnectDelay: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond,
		}, ep, rec, deaths, calls)
		groups = append(groups, group{f, rec, name})
	}
	// until waits, polling the counters, until cond holds for every group; a minute is the
	// bound of a test that would otherwise never end.
	until := func(what string, cond func(c func(metrics.Counter) int64) bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; {
			ok := true
			for _, g := range groups {
				s := g.rec.Snapshot()
				ok = ok && cond(s.Counter)
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("after a minute, still waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond) // polling counters, not synchronising
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	callsOn.Store(true)
	done := make(chan struct{})
	start := time.Now()
	for _, g := range groups {
		go func() { g.fleet.Run(runCtx, start); done <- struct{}{} }()
	}
	until("calls made and streams dropped by the idle timeout", func(c func(metrics.Counter) int64) bool {
		return c(metrics.ToolCallsOK) >= 3 && c(metrics.Drops) >= 1
	})
	for _, g := range groups {
		if err := inj.RemoveToxic(ctx, g.proxy, lb.Name); err != nil {
			t.Fatal(err)
		}
	}
	callsOn.Store(false)
	until("sessions idle past the SDK's SessionTimeout, detected dead", func(c func(metrics.Counter) int64) bool {
		return c(metrics.SessionsDeadDetected) >= 2
	})
	callsBefore := map[string]int64{}
	for _, g := range groups {
		callsBefore[g.proxy] = g.rec.Snapshot().Counter(metrics.ToolCallsOK)
	}
	callsOn.Store(true)
	for _, g := range groups {
		until("calls on re-initialized sessions", func(func(metrics.Counter) int64) bool {
			return g.rec.Snapshot().Counter(metrics.ToolCallsOK) >= callsBefore[g.proxy]+3
		})
	}
	// A death run into is detected (or, by naive, blamed on a tool) a moment later; the run
	// ends at an instant when none is in between, whatever the machine's load.
	callsOn.Store(false)
	until("every death run into detected or blamed", func(c func(metrics.Counter) int64) bool {
		return c(metrics.SessionsDeadDetected)+c(metrics.MisattributedErrors) >= c(metrics.SessionsDead)
	})
	cancel()
	for range groups {
		<-done
	}

	for _, g := range groups {
		s := g.rec.Snapshot()
		t.Logf("%s: counters %v errors %v amplification %.2f", g.proxy, s.Counters, s.Errors, s.RetryAmplification())
		c := func(m metrics.Counter) int64 { return s.Counter(m) }
		if c(metrics.Drops) == 0 {
			t.Errorf("%s: the idle timeout dropped no stream", g.proxy)
		}
		// A call that races its session's death can have its SSE reply closed with the
		// session before the response (a protocol error); anything more is a real one.
		if n := s.Errors[metrics.ErrProtocol]; n > c(metrics.SessionsDeadDetected) {
			t.Errorf("%s: %d protocol errors against the SDK server, for %d deaths", g.proxy, n, c(metrics.SessionsDeadDetected))
		}
		if c(metrics.SessionsDeadDetected) == 0 {
			t.Errorf("%s: no session death was detected, though sessions idled past the SDK's SessionTimeout", g.proxy)
		}
		if c(metrics.StaleEventsApplied) != 0 {
			t.Errorf("%s: stale events applied", g.proxy)
		}
		// The SDK server closes a session's GET stream when the session times out and
		// answers the reconnect with 404: the boundary collapses, and deaths are found on the
		// stream. The truth here is estimated (from when the client saw its last success, a
		// little after the server restarted its timer), so a 404 that arrives within that
		// lag is detected without being counted as run into: detected can only exceed the
		// deaths run into, never fall short of them. These are bounds, not equalities: on a
		// busy machine the lag and the races below grow, and nothing else changes.
		if c(metrics.SessionsDeadDetected) < c(metrics.SessionsDead)-c(metrics.MisattributedErrors) {
			t.Errorf("%s: %d deaths run into, only %d detected as such and %d blamed on tools", g.proxy,
				c(metrics.SessionsDead), c(metrics.SessionsDeadDetected), c(metrics.MisattributedErrors))
		}
		switch g.proxy {
		case "probe":
			// The rule: a dead status is a session death, never a tool failure, never
			// retried. A request in flight when its session is given up fails in transport
			// and may be retried once the loop moves on: at most one retry chain per death.
			if n := c(metrics.MisattributedErrors); n != 0 {
				t.Errorf("probe: %d errors blamed on tools", n)
			}
			if a := s.RetryAmplification(); a > 4 {
				t.Errorf("probe: retry amplification %.2f against a server whose GET tells the truth", a)
			}
		case "naive":
			// Naive blames a tool only when a call reaches a session the stream has not yet
			// reported dead (a call racing the death): at most once per request loop and death.
			if m, d := c(metrics.MisattributedErrors), c(metrics.SessionsDead); m > 2*d {
				t.Errorf("naive: %d errors blamed on tools for %d deaths run into", m, d)
			}
		}
	}
}
