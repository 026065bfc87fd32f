package inspect

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/internal/loopback"
	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/refserver"
)

// The servers inspected in tests: the reference server in several regimes, the official Go
// SDK's streamable handler in each of its modes, and mark3labs/mcp-go's, an independent
// implementation. All on loopback, each for one test. The mcp-go servers are internal/peers'
// (peerAt), in a process of their own: mcp-go v1.2.1 races in its POST handler, and inside
// this race-detecting test binary that race failed inspect's tests.

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

// peerAt starts a real SDK server of internal/peers with the session TTL ttl (0: never ends a
// session) until the test ends.
func peerAt(t *testing.T, start func(testing.TB, peers.Options) *peers.Server, ttl time.Duration) (*url.URL, *peers.Server) {
	t.Helper()
	srv := start(t, peers.Options{SessionTTL: ttl})
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u, srv
}
