package refserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A rolling upgrade across eras behind one origin: a 2025 session, its replica restarted into
// both eras and then into 2026-07-28 only. On the stateless-only replica the old session's
// requests are refused as of another era (400: no Mcp-Method; GET 405) and a re-initialize
// gets 404 with -32601, the same status as a dead session but an unknown method; a stateless
// request is served. A session-only replica answers a stateless request 400. Each such answer
// is counted, across restarts.
func TestEraRollingUpgrade(t *testing.T) {
	c, url := serveCluster(t, Config{SessionTTL: time.Hour, Era: EraSession}, Topology{Replicas: 1})
	cl := mustInit(t, url)
	call := statelessMetaParams(map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
	if resp := newClient(t, url).post("tools/call", call, "Mcp-Method", "tools/call"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a stateless call on a session-only replica: %d, want 400", resp.StatusCode)
	}
	if code, _ := cl.status("ping"); code != http.StatusOK {
		t.Errorf("ping on the session-only replica: %d", code)
	}

	if err := c.RestartAs(0, "upgrade", 0, EraBoth); err != nil {
		t.Fatal(err)
	}
	var r callResult
	readAnswer(t, newClient(t, url).post("tools/call", call, "Mcp-Method", "tools/call")).result(t, &r)
	cl = mustInit(t, url) // the old session died with its replica; both eras are served

	if err := c.RestartAs(0, "upgrade", 0, EraStateless); err != nil {
		t.Fatal(err)
	}
	if code, body := cl.status("ping"); code != http.StatusBadRequest {
		t.Errorf("a session ping on the stateless-only replica: %d %q, want 400", code, body)
	}
	if resp := cl.get(""); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("a GET stream on the stateless-only replica: %d, want 405", resp.StatusCode)
	}
	resp := newClient(t, url).post("initialize", map[string]any{"protocolVersion": "2025-11-25"})
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("initialize on the stateless-only replica: %d, want 404", resp.StatusCode)
	}
	if code := readAnswer(t, resp).errorCode(t); code != jsonrpc.CodeMethodNotFound {
		t.Errorf("initialize's 404 carries %d, want -32601 (an unknown method, not a dead session)", code)
	}
	readAnswer(t, newClient(t, url).post("tools/call", call, "Mcp-Method", "tools/call", "Mcp-Session-Id", cl.session)).result(t, &r)
	if got := c.Stats().WrongEra; got != 4 {
		t.Errorf("wrong-era requests counted %d, want 4 (one on the session-only replica, three on the stateless-only one)", got)
	}
	if err := c.RestartAs(0, "upgrade", 0, "2027"); err == nil {
		t.Error("RestartAs into an unknown era: no error")
	}
}
