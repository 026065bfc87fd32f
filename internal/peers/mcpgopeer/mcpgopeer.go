// Package mcpgopeer is mark3labs/mcp-go's streamable server as the tests' mcp-go peers run it
// (internal/peers: MCPGo, MCPGoRetained, MCPGoStateless, MCPGoIDs, MCPGoHeartbeat,
// MCPGoSortedStore), served by the command cmd/mcpgo-peer in a process of its own.
//
// Why a process of its own: mcp-go v1.2.1 (the newest release) has a data race inside its POST
// handler (the notification forwarder sets the response's headers while the handler's own
// path writes them). Served inside a `go test -race` binary, every test that met it failed on
// a race that is not mcpchaos's, on a busy machine more often than on a quiet one. Built
// without the race detector and run beside the test, the peer is what a team runs in staging:
// a real server in its own process, its bugs its own.
//
// It must not import anything of mcpchaos: internal/peers keys its build of the command on
// this directory's sources (and the module's go.sum), nothing else.
package mcpgopeer

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	mcpgoserver "github.com/mark3labs/mcp-go/server"
)

// Modes are the regimes a peer can be started in, by name.
var Modes = []string{"mcp-go", "mcp-go-retained", "mcp-go-stateless", "mcp-go-ids", "mcp-go-ids-store", "mcp-go-heartbeat", "mcp-go-sorted-store"}

// HeartbeatInterval is how often mcp-go-heartbeat pings each session on its GET stream.
const HeartbeatInterval = 100 * time.Millisecond

// DeadPath answers GET ?id=ID with the Unix time in nanoseconds at which the server ended the
// session ID (its sweeper or a DELETE), or 404 while it lives (and always in the modes that
// keep no record: mcp-go-stateless, mcp-go-ids, mcp-go-heartbeat).
const DeadPath = "/mcpchaos/dead"

// Handler is the peer of mode (on every path: the tests name it /mcp) with its death record on DeadPath, sending every
// session a log message every notify (0: never) until stop is called. evictAfter (0: never), in
// the mcp-go mode, makes its event store forget events that old while their session lives
// (agingStore).
//
//	mcp-go               stateful, an in-memory event store purged with its session, idle TTL ttl
//	mcp-go-retained      as mcp-go, but the event log outlives its sessions (the seed's regime)
//	mcp-go-stateless     WithStateLess(true): no session ids at all
//	mcp-go-ids           the default mode: ids handed out, never checked (silent substitution)
//	mcp-go-ids-store     as mcp-go-ids, with mcp-go's in-memory event store (a team that wants
//	                     resumption adds one and leaves the id manager alone)
//	mcp-go-heartbeat     as mcp-go-ids, with a ping on each GET stream every HeartbeatInterval
//	mcp-go-sorted-store  stateful, idle TTL ttl, one event store for all sessions that replays
//	                     by ids sorted as strings (sortedStore), and only the burst tool
func Handler(mode string, ttl, notify, evictAfter time.Duration) (h http.Handler, stop func(), err error) {
	s := mcpgoserver.NewMCPServer(mode+"-peer", "1", mcpgoserver.WithToolCapabilities(true), mcpgoserver.WithLogging())
	addTools(s)
	ids := &deathRecord{SessionIdManager: &mcpgoserver.InsecureStatefulSessionIdManager{}}
	quiet := mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler))
	var mcp http.Handler
	switch mode {
	case "mcp-go", "mcp-go-retained":
		var store mcpgoserver.EventStore = mcpgoserver.NewInMemoryEventStore()
		if mode == "mcp-go-retained" {
			store = &retainedStore{mcpgoserver.NewInMemoryEventStore()}
		}
		if evictAfter > 0 && mode == "mcp-go" {
			store = &agingStore{EventStore: store, after: evictAfter}
		}
		mcp = mcpgoserver.NewStreamableHTTPServer(s,
			mcpgoserver.WithSessionIdManager(ids), // WithStateful(true), with each death recorded
			mcpgoserver.WithEventStore(store),
			mcpgoserver.WithSessionIdleTTL(ttl),
		)
	case "mcp-go-stateless":
		mcp = mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateLess(true), quiet)
	case "mcp-go-ids":
		mcp = mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithSessionIdleTTL(ttl), quiet)
	case "mcp-go-ids-store":
		mcp = mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithEventStore(mcpgoserver.NewInMemoryEventStore()),
			mcpgoserver.WithSessionIdleTTL(ttl), quiet)
	case "mcp-go-heartbeat":
		mcp = mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithHeartbeatInterval(HeartbeatInterval),
			mcpgoserver.WithSessionIdleTTL(ttl), quiet)
	case "mcp-go-sorted-store":
		s = burstServer()
		mcp = mcpgoserver.NewStreamableHTTPServer(s,
			mcpgoserver.WithSessionIdManager(ids), // WithStateful(true), with each death recorded
			mcpgoserver.WithEventStore(newSortedStore()),
			mcpgoserver.WithSessionIdleTTL(ttl),
			quiet,
		)
	default:
		return nil, nil, fmt.Errorf("mode %q: want one of %v", mode, Modes)
	}
	mux := http.NewServeMux()
	mux.Handle("/", mcp) // every path but DeadPath, as a server mounted anywhere
	mux.HandleFunc("GET "+DeadPath, func(w http.ResponseWriter, r *http.Request) {
		at, ok := ids.deadSince(r.URL.Query().Get("id"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, strconv.FormatInt(at.UnixNano(), 10))
	})
	return mux, notifyLoop(notify, func() {
		s.SendNotificationToAllClients("notifications/message", map[string]any{"level": "info", "data": "tick"})
	}), nil
}

// retainedStore keeps every session's events after the session ends (retention longer than
// the session TTL, as the seed's operators configured it for post-mortem replay): after the
// TTL, a GET with Last-Event-ID answers 200 and replays the dead session's events, while a
// POST answers 404.
type retainedStore struct {
	*mcpgoserver.InMemoryEventStore
}

func (*retainedStore) PurgeSession(context.Context, string) error { return nil }

// agingStore is an event store trimmed by age, as a team bounds one in production (a Redis
// stream trimmed by MINID, a cache with a TTL): an event older than after is forgotten though
// its session lives, and a resume from it is a resume from an unknown id, which mcp-go answers
// 400 "Unknown Last-Event-ID". Events after a cursor still known are newer, so they are kept.
type agingStore struct {
	mcpgoserver.EventStore
	after  time.Duration
	stored sync.Map // event id → time.Time it was stored
}

func (a *agingStore) StoreEvent(ctx context.Context, session, stream string, msg json.RawMessage) (string, error) {
	id, err := a.EventStore.StoreEvent(ctx, session, stream, msg)
	if err == nil {
		a.stored.Store(id, time.Now())
	}
	return id, err
}

func (a *agingStore) ReplayEventsAfter(ctx context.Context, session, last string, send func(string, json.RawMessage) error) (string, error) {
	if at, ok := a.stored.Load(last); ok && time.Since(at.(time.Time)) > a.after {
		return "", fmt.Errorf("%w: %s (trimmed)", mcpgoserver.ErrUnknownEventID, last)
	}
	return a.EventStore.ReplayEventsAfter(ctx, session, last, send)
}

// deathRecord is mcp-go's stateful session id manager with the server's own record of each
// session's death: the moment its sweeper (or a DELETE) terminated the id, taken before the
// id is marked terminated, so no request is refused as dead before the recorded time.
type deathRecord struct {
	mcpgoserver.SessionIdManager
	at sync.Map // session id → time.Time
}

func (d *deathRecord) Terminate(id string) (bool, error) {
	d.at.LoadOrStore(id, time.Now())
	return d.SessionIdManager.Terminate(id)
}

func (d *deathRecord) deadSince(id string) (time.Time, bool) {
	v, ok := d.at.Load(id)
	if !ok {
		return time.Time{}, false
	}
	return v.(time.Time), true
}

// notifyLoop calls send every d (never when d is 0) until the returned stop is called.
func notifyLoop(d time.Duration, send func()) (stop func()) {
	if d <= 0 {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				send()
			}
		}
	}()
	return sync.OnceFunc(func() { close(done); <-exited })
}
