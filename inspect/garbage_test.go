package inspect

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/internal/peers"
)

// rpcHead is the part of a POSTed JSON-RPC message these small servers read.
type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// initialized answers initialize like an MCP server (so that inspect goes on) and
// notifications with 202; it reports false for anything else, for the caller to answer.
func initialized(w http.ResponseWriter, r *http.Request, n *atomic.Int64) (rpcHead, bool) {
	var m rpcHead
	if r.Method != http.MethodPost {
		return m, false
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	_ = json.Unmarshal(body, &m)
	switch {
	case m.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s-%d", n.Add(1)))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"t","version":"1"}}}`, m.ID)
		return m, true
	case m.ID == nil || m.Method == "":
		w.WriteHeader(http.StatusAccepted) // a notification or a response
		return m, true
	}
	return m, false
}

// bomb is a gzip body of 32 MiB of zeros: 32 copies of one member (a gzip stream may hold
// several), about 33 KiB on the wire.
var bomb = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	z.Write(make([]byte, 1<<20))
	z.Close()
	return bytes.Repeat(b.Bytes(), 32)
})

// garbageServer answers initialize as an MCP server would, then every other request with what
// the mode says: answers inspect must name as protocol violations, never read as acceptance.
func garbageServer(t *testing.T, mode string) *url.URL {
	var sessions atomic.Int64
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, done := initialized(w, r, &sessions)
		if done {
			return
		}
		if r.Method == http.MethodDelete {
			return // 200: the garbage is in the bodies
		}
		if r.Method == http.MethodGet && mode != "html" && mode != "gzip bomb" {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		switch mode {
		case "html":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>Welcome to the staging portal</body></html>")
		case "result 42":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":42}`, m.ID)
		case "neither result nor error":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s}`, m.ID)
		case "gzip bomb":
			w.Header().Set("Content-Type", "application/json")
			if r.Method == http.MethodGet {
				w.Header().Set("Content-Type", "text/event-stream")
			}
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb())
		}
	}), "/mcp")
}

// A server that answers garbage is named as such (protocol_violation), and nothing else is
// made of its answers: no hazard is invented from a 2xx that is not a JSON-RPC reply. Every
// read is bounded: a gzip bomb costs its compressed size, not its 32 MiB.
func TestGarbageServers(t *testing.T) {
	for _, mode := range []string{"html", "result 42", "neither result nor error", "gzip bomb"} {
		t.Run(mode, func(t *testing.T) {
			u := garbageServer(t, mode)
			bomb() // made before the measure
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			o := Options{Conn: wire.Conn{URL: u}, Idle: 300 * time.Millisecond, Timeout: 2 * time.Second}
			if mode == "html" {
				o.TTL = 300 * time.Millisecond // the TTL's steps meet the garbage too
			}
			fp, err := Inspect(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			var table strings.Builder
			WriteTable(&table, fp)
			if got := factsOf(fp).Hazards; len(got) != 1 || got[0] != "protocol_violation" {
				t.Errorf("hazards %v, want only protocol_violation\n%s", got, table.String())
			}
			if fp.SilentSubstitution != nil || fp.GetValidatesSession != nil || fp.ReplayAfterDeath != nil || fp.MissingSessionStatus != nil {
				t.Errorf("facts made of garbage:\n%s", table.String())
			}
			t.Logf("%s", table.String())
			if !strings.Contains(table.String(), "protocol_violation: the server answered") {
				t.Errorf("the table does not name the violation:\n%s", table.String())
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("inspect allocated %d MiB against a %d KiB server", grew>>20, len(bomb())>>10)
			}
		})
	}
}

// askingServer is a session server whose GET stream, once per session, sends roots/list and
// elicitation/create (server requests, not keepalives), then closes at closeAfter. It counts
// the valid answers: no roots, and an error for the elicitation inspect cannot serve.
func askingServer(t *testing.T, closeAfter time.Duration, answers *atomic.Int64) *url.URL {
	var sessions atomic.Int64
	var asked sync.Map // session id → already asked
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, done := initialized(w, r, &sessions)
		switch {
		case done:
			switch {
			case m.Method == "" && string(m.ID) == `"roots-1"` && strings.ReplaceAll(string(m.Result), " ", "") == `{"roots":[]}`:
				answers.Add(1)
			case m.Method == "" && string(m.ID) == `"elicit-1"` && m.Result == nil && strings.Contains(string(m.Error), "-32601"):
				answers.Add(1)
			}
			return
		case r.Method == http.MethodPost:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
			return
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
			if _, loaded := asked.LoadOrStore(r.Header.Get("Mcp-Session-Id"), true); !loaded {
				io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"roots-1\",\"method\":\"roots/list\"}\n\n")
				io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"elicit-1\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"?\"}}\n\n")
				http.NewResponseController(w).Flush()
			}
			select {
			case <-time.After(closeAfter):
			case <-r.Context().Done():
			}
			return
		default:
			return // DELETE: 200
		}
	}), "/mcp")
}

// A server request on the idle stream is answered and counted, never taken for a keepalive;
// a stream the server closes is reported closed at that time, not "no keepalive"; a server's
// ping heartbeat (mcp-go's) is a keepalive, and is answered too.
func TestServerRequestsAndClosedStreams(t *testing.T) {
	t.Run("roots/list and elicitation, then the server closes the stream", func(t *testing.T) {
		var answers atomic.Int64
		u := askingServer(t, 300*time.Millisecond, &answers)
		fp, err := Inspect(context.Background(), Options{Conn: wire.Conn{URL: u}, Idle: 5 * time.Second, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var table strings.Builder
		WriteTable(&table, fp)
		if fp.StreamKeepaliveMS != nil || fp.StreamClosedMS == nil || *fp.StreamClosedMS >= 5000 {
			t.Errorf("keepalive %v, closed at %v: want none, closed before the watch's end\n%s", fp.StreamKeepaliveMS, fp.StreamClosedMS, table.String())
		}
		if fp.ServerRequests["roots/list"] < 1 || fp.ServerRequests["elicitation/create"] < 1 || answers.Load() < 2 {
			t.Errorf("server requests counted %v, answered validly %d times", fp.ServerRequests, answers.Load())
		}
		if slices.Contains(factsOf(fp).Hazards, "no_keepalive") || !strings.Contains(table.String(), "closed the stream at") {
			t.Errorf("a closed stream read as no keepalive:\n%s", table.String())
		}
	})
	t.Run("mcp-go's ping heartbeat", func(t *testing.T) {
		u, _ := peerAt(t, peers.MCPGoHeartbeat, 0)
		fp, err := Inspect(context.Background(), Options{Conn: wire.Conn{URL: u}, Idle: 5 * time.Second, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if fp.StreamKeepaliveMS == nil || fp.KeepaliveKind != keepalivePing || fp.ServerRequests["ping"] < 1 {
			t.Errorf("keepalive %v (%s), pings answered %d: want a ping keepalive, answered", fp.StreamKeepaliveMS, fp.KeepaliveKind, fp.ServerRequests["ping"])
		}
	})
}
