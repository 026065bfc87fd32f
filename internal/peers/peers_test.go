package peers

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawSession is just enough of a client to check a peer's regime by hand.
type rawSession struct {
	t   *testing.T
	url string
	id  string
}

func (s *rawSession) post(body string) (*http.Response, string) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func open(t *testing.T, u string) *rawSession {
	s := &rawSession{t: t, url: u}
	resp, body := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"peers-test","version":"1"}}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	s.id = resp.Header.Get("Mcp-Session-Id")
	s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// lastID is the last SSE id: in body, "" when none.
func lastID(body string) string {
	id := ""
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "id:"); ok {
			id = strings.TrimSpace(v)
		}
	}
	return id
}

// TestPeers checks what each peer promises: typed tools that refuse arguments they do not
// take, progress notifications on an SSE reply with event ids when given a progress token,
// and, after the TTL, the regime: GET with Last-Event-ID and POST answers.
func TestPeers(t *testing.T) {
	const ttl = 500 * time.Millisecond
	cases := []struct {
		start             func(testing.TB, Options) *Server
		replayAfterDeath  int // the GET's status with a cursor, after the session died
		progressOnRequest bool
	}{
		{GoSDK, 404, true},
		{MCPGo, 400, true},         // its log is purged with the session: the cursor is unknown
		{MCPGoRetained, 200, true}, // the log outlives the session: the replay lies
		{TS, 404, true},
	}
	for _, c := range cases {
		srv := c.start(t, Options{SessionTTL: ttl})
		t.Run(srv.Name, func(t *testing.T) {
			s := open(t, srv.URL)
			_, body := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_order","arguments":{"text":"x"}}}`)
			if !strings.Contains(body, `"isError":true`) && !strings.Contains(body, `"error"`) {
				t.Errorf("lookup_order took arguments it does not declare: %s", body)
			}
			_, body = s.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"report_progress","arguments":{"steps":3},"_meta":{"progressToken":"p1"}}}`)
			if n := strings.Count(body, "notifications/progress"); n != 3 {
				t.Errorf("report_progress sent %d progress notifications, want 3: %s", n, body)
			}
			cursor := lastID(body)
			if cursor == "" {
				t.Fatalf("the reply to a call with a progress token carries no event id: %s", body)
			}
			// Let the session idle past its TTL and the mcp-go sweeper's period (at least 1s);
			// each ping is activity, so the idle wait starts over after it. Bounded.
			for i := 0; ; i++ {
				time.Sleep(ttl + 2*time.Second)
				resp, _ := s.post(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
				if resp.StatusCode == 404 {
					break
				}
				if i == 3 {
					t.Fatalf("the session still answers %d after idling 4 times %v", resp.StatusCode, ttl+2*time.Second)
				}
			}
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", s.id)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			req.Header.Set("Last-Event-ID", cursor)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.replayAfterDeath {
				t.Errorf("GET with Last-Event-ID after the death: %d, want %d", resp.StatusCode, c.replayAfterDeath)
			}
			// This raw client answers no server request: the peers that ask must count it.
			if st := srv.Stats(); srv.Name != "mcp-go" && srv.Name != "mcp-go-retained" && st.Unanswered+st.Abandoned != st.ServerRequests {
				t.Errorf("stats: %+v, want every server request unanswered", st)
			}
		})
	}
}
