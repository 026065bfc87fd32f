// Tests of what a slow server or machine does to inspect: an answer or a session lost to a
// wait tells nothing, and is tried again.

package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// With a declared TTL, a keepalive watch whose session is found dead (its pings came too late
// on a loaded machine) tells nothing about the stream: it is watched again on a fresh session.
// Here the session is dead before the watch begins (ended by DELETE); the watch still reports
// an idle stream watched for its whole time with nothing on it (the Go SDK sends no
// keepalive), not a stream closed by the server nor an unwatched one.
func TestKeepaliveWatchOutlivesADeadSession(t *testing.T) {
	const sessionTTL = 2 * time.Second // long enough for the pings every third of it, loaded
	u := sdkServer(t, &mcp.StreamableHTTPOptions{SessionTimeout: sessionTTL})
	in, err := newInspector(Options{Conn: wire.Conn{URL: u}, TTL: sessionTTL, Idle: 300 * time.Millisecond, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := in.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := s.Delete(ctx); err != nil || st/100 != 2 {
		t.Fatalf("DELETE: %d %v", st, err)
	}
	in.watchKeepalive(ctx, s)
	fp := in.fp
	if fp.KeepaliveWatchedMS != 300 || fp.StreamClosedMS != nil || fp.StreamKeepaliveMS != nil {
		t.Errorf("watched %d ms, closed at %v, keepalive %v; want 300 ms watched, open, none; notes %v",
			fp.KeepaliveWatchedMS, fp.StreamClosedMS, fp.StreamKeepaliveMS, fp.Notes)
	}
}
