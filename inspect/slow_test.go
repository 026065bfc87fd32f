package inspect

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/peers"
)

// stallFirstCalls is a proxy in front of u that holds the first tools/call of every session
// unanswered until the client gives up on it, and passes everything else through: a server
// slow once, as a loaded staging box (or a loaded CI machine) is. It counts the calls held.
func stallFirstCalls(t *testing.T, u *url.URL) (*url.URL, func() int) {
	var mu sync.Mutex
	stalled := map[string]bool{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m rpcHead
			_ = json.Unmarshal(body, &m)
			sid := r.Header.Get("Mcp-Session-Id")
			mu.Lock()
			hold := m.Method == "tools/call" && sid != "" && !stalled[sid]
			if hold {
				stalled[sid] = true
			}
			mu.Unlock()
			if hold {
				<-r.Context().Done() // the client gave up: its wait ended, not the server's answer
				return
			}
		}
		proxy.ServeHTTP(w, r)
	})
	held := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(stalled)
	}
	return serve(t, h, ""), held
}

// A tool call whose answer does not come within inspect's first wait is tried again: against
// mcp-go with a retained event log whose first tool call of each session is held unanswered,
// inspect still gets its cursor from the tool call and names replay_lies, with the same
// fingerprint as against the server answering at once. Before, the held call read as a server
// that offers no cursor, and replay_after_death turned "unknown" (one run in 30 on a loaded
// machine).
func TestSlowAnswerIsTriedAgain(t *testing.T) {
	peer, _ := peerURL(t, peers.MCPGoRetained)
	u, held := stallFirstCalls(t, peer)
	u.Path = peer.Path
	fp := inspectURL(t, u, peerTTL)
	checkFacts(t, fp, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
		GetValidates: "no", Replay: "yes", Cross: "no", Silent: "no",
		Post: "404", Get: "200", GetCursor: "200", Missing: "404", DupGet: "200",
		Holds: "no", Via: "a tools/call report_progress reply, sent with a progress token", Probe: "ping", Dead: []int{404},
		Hazards: []string{"replay_lies", "permissive_get", "stream_does_not_hold_session", "no_keepalive"}})
	if held() < 2 {
		t.Errorf("the proxy held the first tool call of %d sessions; want the session killed by DELETE and the one left to expire", held())
	}
	for _, n := range fp.Notes {
		if strings.Contains(n, "no complete answer") {
			t.Errorf("a held call was given up on: %s", n)
		}
	}
}
