package peers

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
)

// MCPGo starts mark3labs/mcp-go's streamable server, stateful, with its in-memory event store
// and the idle TTL o.SessionTTL (its sweeper ends a session between TTL and TTL + max(TTL/2,
// 1s) after its last request). When a session ends, its events are purged with it.
func MCPGo(t testing.TB, o Options) *Server {
	t.Helper()
	return mcpGo(t, o, "mcp-go", mcpgoserver.NewInMemoryEventStore())
}

// MCPGoRetained is MCPGo with an event store whose log outlives the sessions: it is never
// purged when a session ends. After the TTL, a GET with Last-Event-ID answers 200 and replays
// the dead session's events, while a POST answers 404: the seed's regime, in a real SDK.
func MCPGoRetained(t testing.TB, o Options) *Server {
	t.Helper()
	return mcpGo(t, o, "mcp-go-retained", &retainedStore{mcpgoserver.NewInMemoryEventStore()})
}

// retainedStore keeps every session's events after the session ends (retention longer than
// the session TTL, as the seed's operators configured it for post-mortem replay).
type retainedStore struct {
	*mcpgoserver.InMemoryEventStore
}

func (*retainedStore) PurgeSession(context.Context, string) error { return nil }

func mcpGo(t testing.TB, o Options, name string, store mcpgoserver.EventStore) *Server {
	s := mcpgoserver.NewMCPServer(name+"-peer", "1", mcpgoserver.WithToolCapabilities(true), mcpgoserver.WithLogging())
	addMCPGoTools(s)
	ids := &deathRecord{SessionIdManager: &mcpgoserver.InsecureStatefulSessionIdManager{}}
	h := mcpgoserver.NewStreamableHTTPServer(s,
		mcpgoserver.WithSessionIdManager(ids), // WithStateful(true), with each death recorded
		mcpgoserver.WithEventStore(store),
		mcpgoserver.WithSessionIdleTTL(o.SessionTTL),
	)
	notifyLoop(t, o.Notify, func(context.Context) {
		s.SendNotificationToAllClients("notifications/message", map[string]any{"level": "info", "data": "tick"})
	})
	return &Server{Name: name, URL: serve(t, h), stats: (&counter{}).stats, deaths: ids.deadSince}
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

func addMCPGoTools(s *mcpgoserver.MCPServer) {
	s.AddTool(mcpgo.NewTool("lookup_order", mcpgo.WithDescription("Look up an order by id"),
		mcpgo.WithString("order_id", mcpgo.Required(), mcpgo.MinLength(1)),
		mcpgo.WithInteger("quantity", mcpgo.Required(), mcpgo.Min(1)),
		mcpgo.WithString("priority", mcpgo.Enum("low", "high")),
	), func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		id, err := req.RequireString("order_id")
		if err != nil {
			return mcpgo.NewToolResultError(err.Error()), nil
		}
		q, err := req.RequireInt("quantity")
		if err != nil || q < 1 {
			return mcpgo.NewToolResultError("quantity must be an integer of at least 1"), nil
		}
		return mcpgo.NewToolResultText(fmt.Sprintf("order %s: %d", id, q)), nil
	})
	s.AddTool(mcpgo.NewTool("report_progress", mcpgo.WithDescription("Work in steps, reporting progress when asked for it"),
		mcpgo.WithInteger("steps", mcpgo.Required(), mcpgo.Min(1), mcpgo.Max(20)),
	), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		steps, err := req.RequireInt("steps")
		if err != nil || steps < 1 || steps > 20 {
			return mcpgo.NewToolResultError("steps must be an integer from 1 to 20"), nil
		}
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			srv := mcpgoserver.ServerFromContext(ctx)
			for i := 1; i <= steps; i++ {
				_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
					"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": steps,
				})
			}
		}
		return mcpgo.NewToolResultText(fmt.Sprintf("done in %d steps", steps)), nil
	})
	s.AddTool(mcpgo.NewTool("slow_query", mcpgo.WithDescription("Answer a query after a delay"),
		mcpgo.WithString("query", mcpgo.Required()),
		mcpgo.WithInteger("delay_ms", mcpgo.Min(0), mcpgo.Max(5000)),
	), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		q, err := req.RequireString("query")
		if err != nil {
			return mcpgo.NewToolResultError(err.Error()), nil
		}
		if err := pause(ctx, req.GetInt("delay_ms", 0)); err != nil {
			return nil, err
		}
		return mcpgo.NewToolResultText("result of " + q), nil
	})
}

// MCPGoStateless starts mcp-go's streamable server with server.WithStateLess(true): no
// Mcp-Session-Id at all (a valid 2025 server: ids are optional), every request served as a
// new session, and a GET without a session id answered 200 and held open. Like every mode of
// mcp-go v1.2.1 it also speaks the stateless 2026-07-28 revision to a client that asks for it
// (server/discover, subscriptions/listen): a 2025 client meets the session family.
func MCPGoStateless(t testing.TB, o Options) *Server {
	t.Helper()
	s := mcpgoserver.NewMCPServer("mcp-go-stateless-peer", "1", mcpgoserver.WithToolCapabilities(true), mcpgoserver.WithLogging())
	addMCPGoTools(s)
	h := mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateLess(true), quiet)
	return &Server{Name: "mcp-go-stateless", URL: serve(t, h), stats: (&counter{}).stats}
}

// MCPGoIDs starts mcp-go's streamable server in its default mode: it hands out session ids
// but keeps no record of them (StatelessGeneratingSessionIdManager: any well-formed id is
// accepted), so a session it "ended" (the idle TTL o.SessionTTL) or never issued is served
// 200 as if alive: silent substitution.
func MCPGoIDs(t testing.TB, o Options) *Server {
	t.Helper()
	s := mcpgoserver.NewMCPServer("mcp-go-ids-peer", "1", mcpgoserver.WithToolCapabilities(true), mcpgoserver.WithLogging())
	addMCPGoTools(s)
	h := mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithSessionIdleTTL(o.SessionTTL), quiet)
	return &Server{Name: "mcp-go-ids", URL: serve(t, h), stats: (&counter{}).stats}
}

// quiet keeps mcp-go's log (a line per swept session) out of the test's output.
var quiet = mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler))
