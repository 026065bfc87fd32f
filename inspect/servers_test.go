package inspect

import (
	"context"
	"net/http"
	"net/url"
	"testing"

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

func parseURL(s string) (*url.URL, error) { return url.Parse(s) }
