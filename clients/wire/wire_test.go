package wire

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/refserver"
)

func startTarget(t *testing.T, cfg refserver.Config) *refserver.Instance {
	t.Helper()
	inst, err := refserver.Start("127.0.0.1:0", cfg.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	return inst
}

func endpoint(url string) *Endpoint {
	return &Endpoint{
		URL:            url,
		HTTP:           &http.Client{Transport: Streaming(NewTransport(16))},
		Protocol:       Protocol20251125,
		RequestTimeout: 5 * time.Second,
		MaxBody:        1 << 20,
		MaxEvent:       64 << 10,
		ClientName:     "test",
	}
}

func TestSessionAgainstReferenceServer(t *testing.T) {
	for _, mode := range []string{refserver.PostSSE, refserver.PostJSON} {
		t.Run(mode, func(t *testing.T) {
			inst := startTarget(t, refserver.Config{SessionTTL: time.Minute, PostResponse: mode, SlowSteps: 3, SlowStep: time.Millisecond})
			ctx := context.Background()
			s, _, err := endpoint(inst.URL).Initialize(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s.ID == "" || s.Protocol != Protocol20251125 {
				t.Fatalf("session %q protocol %q", s.ID, s.Protocol)
			}
			if rep, err := s.Ping(ctx); err != nil || !rep.OK() {
				t.Fatalf("ping: %+v %v", rep, err)
			}
			rep, err := s.CallTool(ctx, "echo", map[string]any{"text": "hi"})
			if err != nil || !rep.OK() || !strings.Contains(string(rep.Result), "hi") {
				t.Fatalf("echo: %+v %v", rep, err)
			}
			rep, err = s.Call(ctx, "tools/call", map[string]any{"name": "slow", "_meta": map[string]any{"progressToken": "p"}})
			if err != nil || !rep.OK() {
				t.Fatalf("slow: %+v %v", rep, err)
			}
			if mode == refserver.PostSSE && rep.Notifications != 3 {
				t.Errorf("slow over SSE: %d progress notifications before the result, want 3", rep.Notifications)
			}
			rep, err = s.Call(ctx, "no/such/method", nil)
			if err != nil || rep.RPCError == nil || rep.RPCError.Code != -32601 {
				t.Fatalf("unknown method: %+v %v", rep, err)
			}
			if st, err := s.Delete(ctx); err != nil || st/100 != 2 {
				t.Fatalf("delete: %d %v", st, err)
			}
			rep, err = s.Ping(ctx)
			if err != nil || rep.Status != 404 || !strings.Contains(rep.Body, "session expired") {
				t.Fatalf("ping after delete: %+v %v", rep, err)
			}
		})
	}
}

// The seed's trap on the wire: after the TTL, a replay from the cursor answers 200 with the
// events the client missed, while a ping answers 404.
func TestReplayLiesAfterDeath(t *testing.T) {
	inst := startTarget(t, refserver.Config{SessionTTL: 150 * time.Millisecond, Retention: time.Minute, NotifyInterval: 20 * time.Millisecond})
	ctx := context.Background()
	s, _, err := endpoint(inst.URL).Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.OpenStream(ctx, "")
	if err != nil || st.Status != 200 {
		t.Fatalf("GET: %v %+v", err, st)
	}
	cursor := ""
	for ev, err := range st.Events(64 << 10) {
		if err != nil {
			t.Fatal(err)
		}
		cursor = ev.Cursor
		if ev.Data != "" {
			var m map[string]any
			if err := json.Unmarshal([]byte(ev.Data), &m); err != nil || m["method"] != "notifications/message" {
				t.Fatalf("event %q", ev.Data)
			}
			break // one notification seen; now the client "drops"
		}
	}
	st.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, dead := inst.Server.DeathTime(s.ID); dead {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("session never died")
		}
		time.Sleep(10 * time.Millisecond) // polling the server's record, bounded by the deadline
	}
	re, err := s.OpenStream(ctx, cursor)
	if err != nil || re.Status != 200 {
		t.Fatalf("replay: %v %+v; want 200 (permissive GET)", err, re)
	}
	n := 0
	for ev, err := range re.Events(64 << 10) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Data != "" {
			n++
			break
		}
	}
	re.Close()
	if n == 0 {
		t.Fatal("the replay returned no missed events")
	}
	if rep, err := s.Ping(ctx); err != nil || rep.Status != 404 {
		t.Fatalf("probe after the lying replay: %+v %v; want 404", rep, err)
	}
}
