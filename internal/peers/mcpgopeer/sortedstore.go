package mcpgopeer

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
)

// sortedStore is the TypeScript SDK's example InMemoryEventStore, in Go, behind mcp-go's
// transport: one store for all sessions, never purged, ids "<stream>_<ms>_<random>", and a
// replay that walks the ids sorted as strings (so an event of the same millisecond may sort
// before the cursor and be skipped, and one of another session's stream after it be sent).
// The regime in which inspect once flipped its cross-session verdict.
type sortedStore struct {
	mu     sync.Mutex
	events map[string]sortedEvent
}

type sortedEvent struct {
	stream string
	msg    json.RawMessage
}

func newSortedStore() *sortedStore { return &sortedStore{events: map[string]sortedEvent{}} }

func (s *sortedStore) StoreEvent(_ context.Context, _, stream string, msg json.RawMessage) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("%s_%d_%08x", stream, time.Now().UnixMilli(), rand.Uint32())
	s.events[id] = sortedEvent{stream, slices.Clone(msg)}
	return id, nil
}

func (s *sortedStore) ReplayEventsAfter(_ context.Context, _, last string, send func(string, json.RawMessage) error) (string, error) {
	s.mu.Lock()
	at, ok := s.events[last]
	ids := slices.Sorted(maps.Keys(s.events))
	events := maps.Clone(s.events)
	s.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("%w: %s", mcpgoserver.ErrUnknownEventID, last)
	}
	for _, id := range ids {
		if e := events[id]; id > last && e.stream == at.stream {
			if err := send(id, e.msg); err != nil {
				return "", err
			}
		}
	}
	return at.stream, nil
}

func (*sortedStore) PurgeSession(context.Context, string) error { return nil }

// burstServer is the sorted-store regime's server: its one tool, burst, sends three progress
// notifications at once (in the same millisecond) when given a progress token, so that their
// ids differ only in their random part. It offers no other tool, so that a client looking for
// event ids (inspect) meets the burst and nothing else.
func burstServer() *mcpgoserver.MCPServer {
	s := mcpgoserver.NewMCPServer("mcp-go-sorted-store-peer", "1", mcpgoserver.WithToolCapabilities(true))
	s.AddTool(mcpgo.NewTool("burst", mcpgo.WithDescription("reports progress three times at once")),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
				for i := 1; i <= 3; i++ {
					_ = mcpgoserver.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
						map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": 3})
				}
			}
			return mcpgo.NewToolResultText("done"), nil
		})
	return s
}
