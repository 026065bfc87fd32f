package fleet_test

import (
	"context"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// The Go SDK's evicting store answers a resume from a purged cursor 400, not 404 (its comment:
// a 404 would tell the client the session is gone): clients that take 400 as a refused cursor
// keep their live session (resync) and declare none dead; a client that takes 400 for a dead
// session (dead400, as a client of the TypeScript SDK's 400-for-unknown-session server is
// told to) abandons live ones, which the run shows by a follow-up ping answered 200. Bounds
// only. (Moved from the engine, whose wall-clock phases lost the story at load 8-16: clients
// not yet streaming when the proxy went down at 1.2 s had no cursor to resume from.)
func TestEvictedCursorGoSDKServer(t *testing.T) {
	if testing.Short() {
		t.Skip("interop test: 5s")
	}
	srv := peers.GoSDK(t, peers.Options{SessionTTL: time.Minute, Notify: 50 * time.Millisecond, EventStoreMaxBytes: 512})
	rs := evictedRun(t, srv.URL)
	for _, name := range []string{policy.NameNaive, policy.NameProbe} {
		r := rs[name]
		if r.c(metrics.ReplaysUnknownCursor) == 0 || r.c(metrics.LiveSessionsDeclaredDead) != 0 {
			t.Errorf("%s: replays refused %d, live sessions declared dead %d: want refusals (400), none declared dead", name,
				r.c(metrics.ReplaysUnknownCursor), r.c(metrics.LiveSessionsDeclaredDead))
		}
	}
	r := rs["dead400"]
	if r.c(metrics.LiveSessionsDeclaredDead) == 0 || r.c(metrics.LiveSessionsDeclaredDead) > r.c(metrics.ReplaysDead) {
		t.Errorf("dead400: live sessions declared dead %d, replays answered dead %d: want some, at most one per dead replay",
			r.c(metrics.LiveSessionsDeclaredDead), r.c(metrics.ReplaysDead))
	}
}

// evictedClients is how many clients each group of evictedRun starts.
const evictedClients = 4

// evictedRun runs wire clients against the Go SDK's server whose MemoryEventStore keeps a few
// hundred bytes: a proxy outage makes the clients' cursors purged while their sessions live.
// Its phases follow what happened, each wait bounded at 60 s: calls until every group has
// started its sessions, had a call answered and applied two events per client (its streams
// carry event ids); quiet
// while the proxy is down for 1 s (the server notifies every 50 ms meanwhile, well past what
// its store keeps) and until every group has resumed a stream (no call races the first
// replays and the follow-up ping that judges an abandoned session); calls until dead400 has
// replaced each session it abandoned.
func evictedRun(t *testing.T, u string) map[string]*groupResult {
	t.Helper()
	inj, err := faults.NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	var calling atomic.Bool
	calling.Store(true)
	results, names := map[string]*groupResult{}, []string{policy.NameNaive, policy.NameProbe, "dead400"}
	deaths := truth.NewEstimated(0) // no TTL: no session dies in this run
	for _, name := range names {
		results[name] = evictedGroup(t, inj, u, name, deaths, func(time.Duration) bool { return calling.Load() })
	}
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{}, len(names))
	start := time.Now()
	for _, r := range results {
		go func() { r.fleet.Run(runCtx, start); done <- struct{}{} }()
	}
	all := func(ok func(name string, r *groupResult) bool) func() bool {
		return func() bool {
			for name, r := range results {
				if !ok(name, r) {
					return false
				}
			}
			return true
		}
	}
	streaming := all(func(_ string, r *groupResult) bool {
		return r.rec.Get(metrics.SessionsStarted) >= evictedClients && r.rec.Get(metrics.ToolCallsOK) > 0 &&
			r.rec.Get(metrics.EventsApplied) >= 2*evictedClients
	})
	if !waitUntil(streaming, 60*time.Second) {
		t.Errorf("after 60 s some group had not started its sessions, had no call answered or few events; the outage starts anyway")
	}
	calling.Store(false)
	if err := faults.RunSchedule(runCtx, inj, time.Now(), []faults.Scheduled{{Fault: faults.Toxic{Name: "outage", Type: faults.TypeDown},
		Proxies: names, At: 200 * time.Millisecond, For: time.Second}}, nil); err != nil {
		t.Fatal(err)
	}
	// Quiet until every group has resumed: a replay answered (whatever the answer), and for
	// dead400 a death detected after it, which comes after its judgement of the session.
	resumed := all(func(name string, r *groupResult) bool {
		if name == "dead400" {
			return r.rec.Get(metrics.ReplaysDead) > 0 && r.rec.Get(metrics.SessionsDeadDetected) > 0
		}
		return r.rec.Get(metrics.ReplaysOK)+r.rec.Get(metrics.ReplaysDead)+r.rec.Get(metrics.ReplaysUnknownCursor) > 0
	})
	if !waitUntil(resumed, 60*time.Second) {
		t.Errorf("60 s after the outage some group had not resumed a stream")
	}
	// Calls again until dead400 has replaced every session it abandoned, those of its dead
	// replays included (each judged by its ping before it was abandoned, and counted detected
	// only then), and a follow-up ping has judged one of them: no judgement is cut by the end
	// of the run. (At load, a plain reconnect's death could be counted first and satisfy the
	// count while the dead replays' pings were still in flight; the end then cut them.)
	calling.Store(true)
	replaced := func() bool {
		r := results["dead400"].rec
		return r.Get(metrics.SessionsStarted) >= evictedClients+max(r.Get(metrics.SessionsDeadDetected), r.Get(metrics.ReplaysDead)) &&
			r.Get(metrics.LiveSessionsDeclaredDead) > 0
	}
	if !waitUntil(replaced, 60*time.Second) {
		t.Errorf("60 s after the outage dead400 had not replaced the sessions it abandoned, or judged none of them live")
	}
	cancel()
	for range names {
		<-done
	}
	for _, name := range names {
		r := results[name]
		r.snap = r.rec.Snapshot()
		t.Logf("%-7s %s errors %q", name, r, r.fleet.Report().ErrorSamples)
	}
	return results
}

// evictedGroup is one group of evictedRun, its clients behind a proxy of inj of its own.
func evictedGroup(t *testing.T, inj *faults.Embedded, u, name string, deaths truth.Truth, calls func(time.Duration) bool) *groupResult {
	t.Helper()
	target, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	listen, err := inj.AddProxy(context.Background(), name, target.Host)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := wire.NewHTTPClient(wire.Conn{URL: target, Dial: listen, MaxConns: 16})
	if err != nil {
		t.Fatal(err)
	}
	ep := &wire.Endpoint{URL: u, HTTP: hc, Protocol: wire.Protocol20251125, RequestTimeout: 4 * time.Second,
		MaxBody: 1 << 20, MaxEvent: 1 << 20, ClientName: "mcpchaos-" + name}
	kind, dead := name, []int{404, 410}
	if name == "dead400" {
		kind, dead = policy.NameProbe, []int{404, 410, 400}
	}
	pol, err := policy.New(kind, policy.Config{Retries: 3})
	if err != nil {
		t.Fatal(err)
	}
	rec := metrics.NewRecorder(name, kind, evictedClients)
	f := fleet.New(fleet.GroupConfig{
		Name: name, Clients: evictedClients, Ramp: 300 * time.Millisecond, Policy: pol, Probe: "ping",
		DeadStatuses: dead, RetryBackoff: 20 * time.Millisecond, CallEvery: 300 * time.Millisecond,
		Tool: "lookup_order", Arguments: map[string]any{"order_id": "o-1", "quantity": 1}, LogLevel: "info",
		ReconnectDelay: 50 * time.Millisecond, ReconnectMax: 500 * time.Millisecond,
	}, ep, rec, deaths, calls)
	return &groupResult{rec: rec, fleet: f}
}
