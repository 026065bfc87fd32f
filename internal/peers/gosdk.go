package peers

// The Go SDK peer serves logging and roots, which the 2026-07-28 revision deprecates: mcpchaos
// measures clients of the session family (2025-03-26 to 2025-11-25), where they are current.
//lint:file-ignore SA1019 logging and roots are deprecated only from 2026-07-28; these peers serve the revisions mcpchaos measures

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/internal/peers/mcpgopeer"
)

// GoSDK starts the official Go SDK's streamable handler with its MemoryEventStore and the
// session timeout o.SessionTTL. Its GET validates the session: a dead id gets 404 there too.
func GoSDK(t testing.TB, o Options) *Server {
	t.Helper()
	c := &counter{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-peer", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{}},
	})
	addGoSDKTools(srv, c)
	store := mcp.NewMemoryEventStore(nil)
	if o.EventStoreMaxBytes > 0 {
		store.SetMaxBytes(o.EventStoreMaxBytes)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		SessionTimeout: o.SessionTTL,
		EventStore:     store,
	})
	notifyLoop(t, o.Notify, func(ctx context.Context) {
		for ss := range srv.Sessions() {
			_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "tick"})
		}
	})
	return &Server{Name: "go-sdk", URL: serve(t, h), stats: c.stats}
}

type lookupOrderIn struct {
	OrderID  string `json:"order_id"`
	Quantity int    `json:"quantity"`
	Priority string `json:"priority,omitempty"`
}

type reportProgressIn struct {
	Steps int `json:"steps"`
}

type slowQueryIn struct {
	Query   string `json:"query"`
	DelayMS int    `json:"delay_ms,omitempty"`
}

func ptr[T any](v T) *T { return &v }

func addGoSDKTools(srv *mcp.Server, c *counter) {
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup_order", Description: "Look up an order by id", InputSchema: &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"order_id": {Type: "string", MinLength: ptr(1)},
			"quantity": {Type: "integer", Minimum: ptr(1.0)},
			"priority": {Type: "string", Enum: []any{"low", "high"}},
		},
		Required:             []string{"order_id", "quantity"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}}, func(_ context.Context, _ *mcp.CallToolRequest, in lookupOrderIn) (*mcp.CallToolResult, any, error) {
		return text(fmt.Sprintf("order %s: %d", in.OrderID, in.Quantity)), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "report_progress", Description: "Work in steps, reporting progress when asked for it", InputSchema: &jsonschema.Schema{
		Type:                 "object",
		Properties:           map[string]*jsonschema.Schema{"steps": {Type: "integer", Minimum: ptr(1.0), Maximum: ptr(20.0)}},
		Required:             []string{"steps"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}}, func(ctx context.Context, req *mcp.CallToolRequest, in reportProgressIn) (*mcp.CallToolResult, any, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			for i := 1; i <= in.Steps; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps)})
			}
		}
		actx, cancel := context.WithTimeout(ctx, askTimeout)
		defer cancel()
		c.ask(goSDKAnswered(ctx, req.Session.Ping(actx, nil)))
		if p := req.Session.InitializeParams(); p != nil && p.Capabilities != nil && p.Capabilities.RootsV2 != nil {
			_, err := req.Session.ListRoots(actx, nil)
			c.ask(goSDKAnswered(ctx, err))
		}
		return text(fmt.Sprintf("done in %d steps", in.Steps)), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "slow_query", Description: "Answer a query after a delay", InputSchema: &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"query":    {Type: "string"},
			"delay_ms": {Type: "integer", Minimum: ptr(0.0), Maximum: ptr(5000.0)},
		},
		Required:             []string{"query"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}}, func(ctx context.Context, _ *mcp.CallToolRequest, in slowQueryIn) (*mcp.CallToolResult, any, error) {
		if err := mcpgopeer.Pause(ctx, in.DelayMS); err != nil { // slow_query's delay, as every peer has it
			return nil, nil, err
		}
		return text("result of " + in.Query), nil, nil
	})
}

// goSDKAnswered classifies what became of a server request: a JSON-RPC error is an answer; no
// answer within askTimeout is unanswered; a cancelled call or a lost connection is a client
// that went away.
func goSDKAnswered(ctx context.Context, err error) outcome {
	var we *jsonrpc.Error
	switch {
	case err == nil, errors.As(err, &we):
		return answered
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return unanswered // the client had askTimeout to answer and did not
	}
	return abandoned // the call was cancelled or its connection lost
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
