package peers

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// rawGet sends a GET for the standalone stream with the session id given (none when ""), and
// returns its status without reading the stream.
func rawGet(t *testing.T, u, id string) int {
	t.Helper()
	resp, err := openGet(context.Background(), u, id)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // a held stream: closing is enough
	return resp.StatusCode
}

// openGet opens the standalone stream with the session id given (none when "").
func openGet(ctx context.Context, u, id string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	return http.DefaultClient.Do(req)
}

// sortedID is the form of the sorted store's event ids.
var sortedID = regexp.MustCompile(`^.+_[0-9]{13}_[0-9a-f]{8}$`)

const unknownID = "mcp-session-0b4cd8a2-6f0e-4d55-9a49-3c1e6b0f2d11" // well-formed, never issued

// Each peer of a regime the issue met does what its doc says: these are the facts the run
// tests against them rely on.
func TestRegimes(t *testing.T) {
	t.Run("mcp-go-stateless", func(t *testing.T) {
		srv := MCPGoStateless(t, Options{})
		s := open(t, srv.URL)
		if s.id != "" {
			t.Errorf("initialize handed out session id %q", s.id)
		}
		if st := rawGet(t, srv.URL, ""); st != 200 {
			t.Errorf("GET without a session id: %d, want 200 (held open)", st)
		}
		if resp, body := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); resp.StatusCode != 200 || !strings.Contains(body, "report_progress") {
			t.Errorf("tools/list without a session: %d %s", resp.StatusCode, body)
		}
	})
	t.Run("mcp-go-ids", func(t *testing.T) {
		srv := MCPGoIDs(t, Options{})
		s := open(t, srv.URL)
		if !strings.HasPrefix(s.id, "mcp-session-") {
			t.Errorf("initialize handed out session id %q", s.id)
		}
		s.id = unknownID
		if resp, body := s.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != 200 || !strings.Contains(body, `"result"`) {
			t.Errorf("ping on a session never issued: %d %s, want 200 with a result (silent substitution)", resp.StatusCode, body)
		}
	})
	t.Run("mcp-go-heartbeat", func(t *testing.T) {
		srv := MCPGoHeartbeat(t, Options{})
		s := open(t, srv.URL)
		// The GET stream carries a ping request within 5 s (one every 100 ms on a quiet machine).
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := openGet(ctx, srv.URL, s.id)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET stream: %v %v", resp, err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() && !strings.Contains(sc.Text(), `"method":"ping"`) {
		}
		if !strings.Contains(sc.Text(), `"method":"ping"`) {
			t.Fatalf("no ping on the GET stream within 5 s: %v", sc.Err())
		}
	})
	t.Run("mcp-go-sorted-store", func(t *testing.T) {
		srv := MCPGoSortedStore(t, Options{})
		s := open(t, srv.URL)
		if _, body := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); !strings.Contains(body, `"burst"`) || strings.Contains(body, "report_progress") {
			t.Errorf("tools/list: %s, want burst alone", body)
		}
		_, body := s.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"burst","_meta":{"progressToken":"p1"}}}`)
		if n := strings.Count(body, "notifications/progress"); n != 3 {
			t.Errorf("burst sent %d progress notifications, want 3: %s", n, body)
		}
		if id := lastID(body); !sortedID.MatchString(id) {
			t.Errorf("event id %q, want <stream>_<ms>_<random> (%s)", id, body)
		}
	})
	t.Run("ts-sdk-400", func(t *testing.T) {
		srv := TS400(t, Options{})
		s := open(t, srv.URL)
		s.id = unknownID
		if resp, body := s.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != 400 {
			t.Errorf("ping on an unknown session: %d %s, want 400", resp.StatusCode, body)
		}
		if st := rawGet(t, srv.URL, unknownID); st != 400 {
			t.Errorf("GET on an unknown session: %d, want 400", st)
		}
	})
	t.Run("everything", func(t *testing.T) {
		srv := Everything(t)
		s := open(t, srv.URL)
		if s.id == "" {
			t.Fatal("initialize handed out no session id")
		}
		if resp, body := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); resp.StatusCode != 200 || !strings.Contains(body, `"echo"`) {
			t.Errorf("tools/list: %d %s", resp.StatusCode, body)
		}
		// Its GET stream sends its headers at once, not with its first keepalive (15 s): a
		// client waiting request_timeout for them opens it.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := openGet(ctx, srv.URL, s.id)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET stream: %v %v (headers not within 5 s?)", resp, err)
		}
		resp.Body.Close()
		cancel()
		// The stream's end forgets nothing; a DELETE does, and the id then gets 400.
		if resp, body := s.post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); resp.StatusCode != 200 {
			t.Errorf("ping after the GET stream ended: %d %s", resp.StatusCode, body)
		}
		id := s.id
		s.id = unknownID
		if resp, body := s.post(`{"jsonrpc":"2.0","id":4,"method":"ping"}`); resp.StatusCode != 400 {
			t.Errorf("ping on an unknown session: %d %s, want 400", resp.StatusCode, body)
		}
		st := srv.Stats()
		if st.SessionsInitialized != 1 || st.GetStreams != 1 || st.SessionsForgotten != 0 || st.Statuses["POST 400"] != 1 || st.RefusedIssued != 0 {
			t.Errorf("the server's record: %+v", st)
		}
		del, _ := http.NewRequest(http.MethodDelete, srv.URL, nil)
		del.Header.Set("Mcp-Session-Id", id)
		if resp, err := http.DefaultClient.Do(del); err != nil || resp.StatusCode != 200 {
			t.Fatalf("DELETE: %v %v", resp, err)
		}
		s.id = id
		if resp, body := s.post(`{"jsonrpc":"2.0","id":5,"method":"ping"}`); resp.StatusCode != 400 {
			t.Errorf("ping on a deleted session: %d %s, want 400", resp.StatusCode, body)
		}
		if st := srv.Stats(); st.SessionsForgotten != 1 || st.Deletes != 1 || st.Statuses["POST 400"] != 2 || st.RefusedIssued != 1 {
			t.Errorf("the server's record after a DELETE: %+v", st)
		}
	})
}

// statelessMeta is the _meta every request of the 2026-07-28 revision must carry.
const statelessMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"peers-test","version":"1"}`

// stateless posts one request of the 2026-07-28 revision with params (a JSON object whose
// _meta holds statelessMeta) and the Mcp-Method header when header is set; it returns the
// status and body.
func stateless(t *testing.T, u, method, params string, header bool) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	if header {
		req.Header.Set("Mcp-Method", method)
		if method == "tools/call" {
			req.Header.Set("Mcp-Name", "lookup_order")
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The Go SDK's stateless server speaks 2026-07-28 only to a request that carries what the
// revision requires, and counts the executions of each logical call: a re-issue that ran again
// is a duplicate.
func TestGoSDKStateless(t *testing.T) {
	srv := GoSDKStateless(t, Options{})
	if st, body := stateless(t, srv.URL, "server/discover", `{"_meta":{`+statelessMeta+`}}`, false); st != 400 || !strings.Contains(body, "Mcp-Method") {
		t.Errorf("server/discover without Mcp-Method: %d %s, want 400 naming the header", st, body)
	}
	st, body := stateless(t, srv.URL, "server/discover", `{"_meta":{`+statelessMeta+`}}`, true)
	if st != 200 || !strings.Contains(body, `"2026-07-28"`) {
		t.Fatalf("server/discover: %d %s, want supportedVersions with 2026-07-28", st, body)
	}
	call := `{"name":"lookup_order","arguments":{"order_id":"A1","quantity":1},"_meta":{` + statelessMeta + `,"io.mcpchaos/call":"c1"}}`
	for i := range 2 {
		if st, body := stateless(t, srv.URL, "tools/call", call, true); st != 200 || !strings.Contains(body, "order A1: 1") {
			t.Fatalf("tools/call %d: %d %s", i, st, body)
		}
	}
	if s := srv.Stats(); s.Executions != 2 || s.Duplicates != 1 {
		t.Errorf("stats %+v, want 2 executions of which 1 duplicate", s)
	}
	if st := rawGet(t, srv.URL, ""); st != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", st)
	}
}
