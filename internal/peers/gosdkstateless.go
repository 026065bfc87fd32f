package peers

//lint:file-ignore SA1019 logging is deprecated only from 2026-07-28; the stateless peer still serves it, as the SDK does

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/mcpwire"
)

// GoSDKStateless starts the official Go SDK's streamable handler with Stateless: true and its
// default protocol versions: it speaks the stateless 2026-07-28 revision (server/discover, the
// Mcp-Method header and the _meta fields each request must carry; GET and DELETE get 405) and
// also answers 2025 clients, each POST on a session of its own. With o.Notify it adds and
// removes a tool every o.Notify, so listeners (subscriptions/listen with toolsListChanged)
// get notifications/tools/list_changed. Its Stats count the tools/call it ran, and those run
// again under a logical call (mcpwire.CallKey in _meta) it had already run: a fact.
func GoSDKStateless(t testing.TB, o Options) *Server {
	t.Helper()
	c := &counter{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-stateless-peer", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	addGoSDKTools(srv, c)
	ex := &executions{byKey: map[string]int{}}
	srv.AddReceivingMiddleware(ex.middleware)
	var notified atomic.Int64
	srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/tools/list_changed" {
				notified.Add(1) // to listeners (2026-07-28 opts in by listening) and 2025 sessions still open
			}
			return next(ctx, method, req)
		}
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var churn atomic.Int64
	notifyLoop(t, o.Notify, func(context.Context) {
		n := churn.Add(1)
		name := fmt.Sprintf("churn_%d", n)
		mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "appears and goes, so that the tool list changes"},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return text(name), nil, nil
			})
		if n > 1 {
			srv.RemoveTools(fmt.Sprintf("churn_%d", n-1))
		}
	})
	return &Server{Name: "go-sdk-stateless", URL: serve(t, h), stats: func() Stats {
		s := c.stats()
		s.Executions, s.Duplicates = ex.counts()
		s.Notified = notified.Load()
		return s
	}}
}

// executions counts the tools/call a server ran, and those run again under a logical call it
// had already run.
type executions struct {
	mu    sync.Mutex
	total int64
	dups  int64
	byKey map[string]int
}

func (e *executions) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			key, _ := req.GetParams().GetMeta()[mcpwire.CallKey].(string)
			e.mu.Lock()
			e.total++
			if key != "" {
				if e.byKey[key] > 0 {
					e.dups++
				}
				e.byKey[key]++
			}
			e.mu.Unlock()
		}
		return next(ctx, method, req)
	}
}

func (e *executions) counts() (total, dups int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.total, e.dups
}
