package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A server may close a POST's SSE reply once it has sent an event id (2025-11-25); the client
// resumes it with GET + Last-Event-ID after the retry delay and gets its response there.
func TestPostReplyIsResumed(t *testing.T) {
	var gets, resumedFrom atomic.Value
	gets.Store(0)
	resumedFrom.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(body, &m)
			switch m.Method {
			case "initialize":
				w.Header().Set("Mcp-Session-Id", "s1")
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"t","version":"1"}}}`, m.ID)
			case "tools/call":
				// Priming event with an id and a retry, one progress notification, then the
				// connection closes before the response.
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "id: p-1\nretry: 5\ndata:\n\n")
				fmt.Fprint(w, `id: p-2`+"\n"+`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`+"\n\n")
			default:
				w.WriteHeader(http.StatusAccepted)
			}
		case http.MethodGet:
			gets.Store(gets.Load().(int) + 1)
			resumedFrom.Store(r.Header.Get("Last-Event-ID"))
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `id: p-3`+"\n"+`data: {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"late"}]}}`+"\n\n")
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	s, _, err := endpoint(srv.URL).Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.CallTool(ctx, "echo", map[string]any{"text": "x"})
	if err != nil || !rep.OK() || !strings.Contains(string(rep.Result), "late") {
		t.Fatalf("reply %+v, err %v; want the response from the resumed stream", rep, err)
	}
	if rep.Resumed != 1 || rep.Notifications != 1 || gets.Load() != 1 || resumedFrom.Load() != "p-2" {
		t.Fatalf("resumed %d times, %d notifications, %d GETs from %q; want 1, 1, 1 from p-2",
			rep.Resumed, rep.Notifications, gets.Load(), resumedFrom.Load())
	}
}
