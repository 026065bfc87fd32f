package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/internal/loopback"
	"github.com/mcpchaos/mcpchaos/refserver"
)

// The servers inspected in tests: the reference server in several regimes, the official Go
// SDK's streamable handler in each of its modes, and mark3labs/mcp-go's, an independent
// implementation. All on loopback, each for one test.

func serve(t *testing.T, h http.Handler, path string) *url.URL {
	t.Helper()
	u, _ := url.Parse("http://" + loopback.Serve(t, h, nil) + path)
	return u
}

func referenceServer(t *testing.T, cfg refserver.Config) *url.URL {
	t.Helper()
	inst, err := refserver.Start("127.0.0.1:0", cfg.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	u, _ := url.Parse(inst.URL)
	return u
}

type echoIn struct {
	Text string `json:"text"`
}

func sdkServer(t *testing.T, opts *mcp.StreamableHTTPOptions, versions ...string) *url.URL {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk-under-test", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: versions})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	return serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts), "/mcp")
}

func mcpgoServer(t *testing.T, opts ...mcpgoserver.StreamableHTTPOption) *url.URL {
	t.Helper()
	s := mcpgoserver.NewMCPServer("mcp-go-under-test", "1", mcpgoserver.WithToolCapabilities(true))
	s.AddTool(mcpgo.NewTool("echo", mcpgo.WithString("text")), func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText(req.GetString("text", "")), nil
	})
	return serve(t, mcpgoserver.NewStreamableHTTPServer(s, opts...), "/mcp")
}

// sortedStore is the TypeScript SDK's example InMemoryEventStore, in Go, behind mcp-go's
// transport: one store for all sessions, never purged, ids "<stream>_<ms>_<random>", and a
// replay that walks the ids sorted as strings (so an event of the same millisecond may sort
// before the cursor and be skipped). The regime in which inspect once flipped.
type sortedStore struct {
	mu     sync.Mutex
	events map[string]sortedEvent
}

type sortedEvent struct {
	stream string
	msg    json.RawMessage
}

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

// sharedSortedStoreServer is mcp-go over a sortedStore, with a tool that sends three progress
// notifications at once (same millisecond) when given a progress token.
func sharedSortedStoreServer(t *testing.T, ttl time.Duration) *url.URL {
	t.Helper()
	s := mcpgoserver.NewMCPServer("sorted-store", "1", mcpgoserver.WithToolCapabilities(true))
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
	return serve(t, mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateful(true),
		mcpgoserver.WithEventStore(&sortedStore{events: map[string]sortedEvent{}}), mcpgoserver.WithSessionIdleTTL(ttl),
		mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler))), "/mcp")
}
