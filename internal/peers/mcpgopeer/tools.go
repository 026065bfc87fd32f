package mcpgopeer

import (
	"context"
	"fmt"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
)

// addTools adds the tools every peer offers (internal/peers' package doc), with the schemas
// such servers have.
func addTools(s *mcpgoserver.MCPServer) {
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
		if err := Pause(ctx, req.GetInt("delay_ms", 0)); err != nil {
			return nil, err
		}
		return mcpgo.NewToolResultText("result of " + q), nil
	})
}

// Pause waits ms milliseconds (300 when 0, at most 5 s) or until ctx ends: slow_query's delay,
// shared with the Go SDK peers (internal/peers).
func Pause(ctx context.Context, ms int) error {
	d := min(time.Duration(ms)*time.Millisecond, 5*time.Second)
	if ms == 0 {
		d = 300 * time.Millisecond
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
