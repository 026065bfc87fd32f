package wire

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/refserver"
)

// statelessSession is a stateless (2026-07-28) session on url, after checking that the server
// names that revision in server/discover.
func statelessSession(t *testing.T, url string) *Session {
	t.Helper()
	ep := endpoint(url)
	n, err := ep.Negotiate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !containsString(n.Supported, ProtocolStateless) {
		t.Fatalf("server/discover named %q, without %s", n.Supported, ProtocolStateless)
	}
	ep.Generation, ep.Protocol = Stateless, ProtocolStateless
	s, _, err := ep.Initialize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// readUntil reads l until fn has seen n notifications, then ends it; it returns their numbers.
func readUntil(t *testing.T, l *Listen, ctx context.Context, cancel context.CancelFunc, n int) []uint64 {
	t.Helper()
	var seqs []uint64
	end := l.Read(ctx, func(nt Notification) {
		if nt.Method != "notifications/tools/list_changed" {
			t.Errorf("notification %q on the listen stream", nt.Method)
		}
		if seqs = append(seqs, nt.Seq); len(seqs) == n {
			cancel()
		}
	})
	l.Close()
	if len(seqs) < n {
		t.Fatalf("listen stream ended after %d notifications (%+v), want %d", len(seqs), end, n)
	}
	return seqs
}

// The reference server speaks the stateless revision beside the session family: a listen
// stream is acknowledged, its notifications are numbered one after another, a re-listen
// after others were sent shows the gap, and a server that closes ends the stream with the
// listen's result (a completion, not a cut).
func TestListenReferenceServer(t *testing.T) {
	inst := startTarget(t, refserver.Config{SessionTTL: time.Minute, NotifyInterval: 20 * time.Millisecond})
	s := statelessSession(t, inst.URL)
	if rep, err := s.CallTool(context.Background(), "echo", map[string]any{"text": "hi"}); err != nil || !rep.OK() {
		t.Fatalf("a stateless tools/call on the reference server: %+v %v", rep, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c1, cancel1 := context.WithCancel(ctx)
	l, err := s.Listen(c1)
	if err != nil {
		t.Fatal(err)
	}
	first := readUntil(t, l, c1, cancel1, 3)
	for i := 1; i < len(first); i++ {
		if first[i] != first[i-1]+1 {
			t.Fatalf("numbers on one held stream %v: not consecutive", first)
		}
	}
	// Another listener sees the server go on numbering while the first is away.
	c2, cancel2 := context.WithCancel(ctx)
	w, err := s.Listen(c2)
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, w, c2, cancel2, 2)
	c3, cancel3 := context.WithCancel(ctx)
	defer cancel3()
	l, err = s.Listen(c3)
	if err != nil {
		t.Fatal(err)
	}
	again := readUntil(t, l, c3, cancel3, 1)
	if lost := again[0] - first[len(first)-1] - 1; lost < 2 {
		t.Fatalf("re-listened at %d after %d with another listener reading 2 between: lost %d, want >= 2", again[0], first[len(first)-1], lost)
	}

	l, err = s.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done, heard := make(chan ListenEnd, 1), make(chan struct{}, 1)
	go func() {
		done <- l.Read(ctx, func(Notification) {
			select {
			case heard <- struct{}{}:
			default:
			}
		})
	}()
	<-heard // the stream is registered: a notification came on it
	inst.Server.Close()
	if end := <-done; !end.Completed {
		t.Fatalf("server closed: the listen stream ended %+v, want its completion", end)
	}
	l.Close()
}

// The official Go SDK's stateless server (v1.8.0) offers subscriptions/listen: it acknowledges
// toolsListChanged and sends notifications/tools/list_changed when its tools change, without
// numbers. A session-family session has no listen stream.
func TestListenGoSDKStateless(t *testing.T) {
	p := peers.GoSDKStateless(t, peers.Options{Notify: 30 * time.Millisecond})
	s := statelessSession(t, p.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, stop := context.WithCancel(ctx)
	l, err := s.Listen(c)
	if err != nil {
		t.Fatal(err)
	}
	seqs := readUntil(t, l, c, stop, 2)
	if seqs[0] != 0 || seqs[1] != 0 {
		t.Errorf("the Go SDK numbers no notifications, read %v", seqs)
	}
	if p.Stats().Notified < 2 {
		t.Errorf("the peer counted %d notifications sent, the client read 2", p.Stats().Notified)
	}

	sf, _, err := endpoint(p.URL).Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sf.Listen(ctx); !errors.Is(err, ErrListenNotOffered) {
		t.Errorf("listen on a session-family session: %v, want ErrListenNotOffered", err)
	}
}

// mcp-go v1.2.1 speaks the stateless revision beside the session family, in its stateless
// mode too, and acknowledges a listen stream for tools/list_changed.
func TestListenMCPGo(t *testing.T) {
	p := peers.MCPGoStateless(t, peers.Options{})
	s := statelessSession(t, p.URL)
	ctx, cancel := context.WithCancel(context.Background())
	l, err := s.Listen(ctx)
	if err != nil {
		t.Fatalf("listen on mcp-go: %v", err)
	}
	cancel()
	if end := l.Read(ctx, func(Notification) {}); end.Completed {
		t.Errorf("a listen stream the client ended: %+v, not a completion", end)
	}
	l.Close()
}

// A server that does not know subscriptions/listen answers it with a JSON-RPC error: no
// listen stream is offered, and the error says what the server said.
func TestListenNotOffered(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found"}}`)
	}))
	defer srv.Close()
	ep := endpoint(srv.URL)
	ep.Generation, ep.Protocol = Stateless, ProtocolStateless
	s, _, _ := ep.Initialize(context.Background())
	_, err := s.Listen(context.Background())
	if !errors.Is(err, ErrListenNotOffered) || !strings.Contains(err.Error(), "method not found") {
		t.Fatalf("listen on a server without it: %v, want ErrListenNotOffered naming its answer", err)
	}
}
