package refserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The session store and the event log, and what each regime makes a replay
// say about liveness.

func TestTTLIsExactAndOnlyPostsRefresh(t *testing.T) {
	const ttl = 100 * time.Millisecond
	clock := newFakeClock()
	srv, url := serve(t, Config{SessionTTL: ttl, Now: clock.Now})
	c := mustInit(t, url)
	born := clock.Now()

	// GETs do not refresh: open one, resume one, then run the TTL out.
	clock.Advance(40 * time.Millisecond)
	s := openStream(t, c.get(""))
	cursor := s.next().id
	s.drop()
	eventually(t, "the stream to close", func() bool { return srv.Stats().StreamsOpen == 0 })
	clock.Advance(40 * time.Millisecond)
	openStream(t, c.get(cursor)).next()

	clock.Advance(ttl - 80*time.Millisecond - time.Nanosecond)
	if _, dead := srv.DeathTime(c.session); dead {
		t.Fatal("dead a nanosecond before lastRefresh+TTL")
	}
	clock.Advance(time.Nanosecond)
	at, dead := srv.DeathTime(c.session)
	if !dead || !at.Equal(born.Add(ttl)) {
		t.Fatalf("DeathTime = %v, %v; want %v (initialize + TTL: the GETs did not refresh)", at, dead, born.Add(ttl))
	}
	if status, body := c.status("ping"); status != http.StatusNotFound || body != `{"error":"session expired"}` {
		t.Fatalf("ping at lastRefresh+TTL: %d %q, want 404", status, body)
	}

	// POSTs refresh, whatever they are: a ping, a notification.
	c = mustInit(t, url)
	clock.Advance(60 * time.Millisecond)
	if status, _ := c.status("ping"); status != http.StatusOK {
		t.Fatalf("ping: %d", status)
	}
	clock.Advance(60 * time.Millisecond)
	if resp := c.request(http.MethodPost, message(0, "notifications/initialized", nil)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notification: %d", resp.StatusCode)
	}
	refreshed := clock.Now()
	clock.Advance(ttl)
	if at, dead := srv.DeathTime(c.session); !dead || !at.Equal(refreshed.Add(ttl)) {
		t.Fatalf("DeathTime = %v, %v; want %v (last POST + TTL)", at, dead, refreshed.Add(ttl))
	}
	if st := srv.Stats(); st.SessionsCreated != 2 || st.SessionsDied != 2 || st.SessionsLive != 0 || st.DeadRequests != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestTTLIsExactOnTheRealClock(t *testing.T) {
	// Long enough that a loaded CI machine gets initialize, GET and ping in before it ends.
	const ttl = time.Second
	srv, url := serve(t, Config{SessionTTL: ttl})
	c := mustInit(t, url)

	cursor := openStream(t, c.get("")).next().id
	before := time.Now()
	if status, _ := c.status("ping"); status != http.StatusOK {
		t.Fatalf("ping: %d", status)
	}
	after := time.Now()
	// A GET while the TTL runs: no refresh. (A permissive replay answers
	// 200 even if a slow machine makes it arrive after the death.)
	openStream(t, c.get(cursor)).next()

	var at time.Time
	eventually(t, "the session to die", func() bool {
		var dead bool
		at, dead = srv.DeathTime(c.session)
		return dead
	})
	if at.Before(before.Add(ttl)) || at.After(after.Add(ttl)) {
		t.Fatalf("died at %v, want within [%v, %v] (the ping + TTL)", at, before.Add(ttl), after.Add(ttl))
	}
	if status, _ := c.status("ping"); status != http.StatusNotFound {
		t.Fatalf("ping after death: %d", status)
	}
}

// TestPermissiveReplayLiesAfterDeath is the seed: the stream drops, the
// session dies, the replay still answers 200 with the missed events, and only
// a probe tells the truth.
func TestPermissiveReplayLiesAfterDeath(t *testing.T) {
	const ttl, retention = 30 * time.Minute, 60 * time.Minute
	clock := newFakeClock()
	// Notifications are emitted by hand (notifyAll is what the ticker calls),
	// so the test knows exactly which ones the client missed.
	srv, url := serve(t, Config{
		SessionTTL: ttl, Retention: retention, GetValidation: Permissive,
		Keepalive: 2 * time.Millisecond, Now: clock.Now,
	})
	c := mustInit(t, url)
	born := clock.Now()

	s := openStream(t, c.get(""))
	s.next() // priming: the stream is registered
	srv.notifyAll(nil, -1)
	seen := s.message()
	if notificationSeq(t, seen.data) != 1 {
		t.Fatalf("first notification %s", seen.data)
	}
	s.drop() // the load balancer's idle timeout
	const emitted = 4
	for range emitted - 1 { // notifications go on while no stream is open
		srv.notifyAll(nil, -1)
	}

	clock.Advance(ttl)     // the session dies; its events stay for the retention
	srv.notifyAll(nil, -1) // dead sessions get nothing
	if at, dead := srv.DeathTime(c.session); !dead || !at.Equal(born.Add(ttl)) {
		t.Fatalf("DeathTime = %v, %v; want %v", at, dead, born.Add(ttl))
	}

	resp := c.get(seen.id)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("replay after death: status %d, want 200 (the permissive regime)", resp.StatusCode)
	}
	replay := openStream(t, resp)
	if priming := replay.next(); priming.id != seen.id || priming.data != "" {
		t.Fatalf("replay priming %+v: want the cursor %s and no data", priming, seen.id)
	}
	// Every notification emitted before the death and after the cursor.
	for want := uint64(2); want <= uint64(emitted); want++ {
		e := replay.message()
		if got := notificationSeq(t, e.data); got != want {
			t.Fatalf("replayed seq %d, want %d", got, want)
		}
	}
	if got := srv.Stats().EventsReplayed; got != emitted-1 {
		t.Errorf("events replayed %d, want %d", got, emitted-1)
	}

	// The probe tells the truth.
	if status, body := c.status("ping"); status != http.StatusNotFound || body != `{"error":"session expired"}` {
		t.Fatalf("probe: %d %q, want 404", status, body)
	}

	// The reaper frees the record; the stream stays open and quiet: only
	// keepalives, no more notifications.
	srv.reap(nil)
	for range 3 {
		if e := replay.next(); e.comment != ": ping" {
			t.Fatalf("after death the stream sent %+v, want only keepalives", e)
		}
	}
	if at, dead := srv.DeathTime(c.session); !dead || !at.Equal(born.Add(ttl)) {
		t.Fatalf("DeathTime after reaping = %v, %v; want %v", at, dead, born.Add(ttl))
	}

	// Once the events have expired, the cursor is gone and the replay fails.
	replay.drop()
	clock.Advance(retention)
	if resp := c.get(seen.id); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("replay after retention: status %d, want 404", resp.StatusCode)
	}
	// And a GET without a cursor was never permissive.
	if resp := c.get(""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET without cursor after death: status %d, want 404", resp.StatusCode)
	}
}

func TestStrictReplayTellsTheTruth(t *testing.T) {
	const ttl = 100 * time.Millisecond // small, so the reaper runs often
	clock := newFakeClock()
	srv, url := serve(t, Config{
		SessionTTL: ttl, Retention: time.Hour, GetValidation: Strict,
		NotifyInterval: 2 * time.Millisecond, Now: clock.Now,
	})
	c := mustInit(t, url)

	s := openStream(t, c.get(""))
	seen := s.message()

	// Alive: the replay works as in the permissive regime.
	s.drop()
	eventually(t, "the stream to close", func() bool { return srv.Stats().StreamsOpen == 0 })
	replay := openStream(t, c.get(seen.id))
	replay.next()
	if got := notificationSeq(t, replay.message().data); got != notificationSeq(t, seen.data)+1 {
		t.Fatalf("replay resumed at seq %d", got)
	}

	// The session dies: the reaper closes its open stream.
	clock.Advance(ttl)
	replay.ends()

	resp := c.get(seen.id)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound || string(body) != `{"error":"session expired"}` {
		t.Fatalf("strict replay after death: %d %q, want 404", resp.StatusCode, body)
	}
}

func TestStrictDeleteClosesTheStream(t *testing.T) {
	_, url := serve(t, Config{GetValidation: Strict})
	c := mustInit(t, url)
	s := openStream(t, c.get(""))
	s.next()
	if resp := c.request(http.MethodDelete, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	s.ends()
}

func TestUnknownCursor(t *testing.T) {
	// Each case makes the cursor (the initialize response's event id) leave
	// the log while the session lives.
	for _, tc := range []struct {
		name  string
		cfg   Config
		evict func(c *client, clock *fakeClock)
	}{
		{
			name: "evicted by count",
			cfg:  Config{RetentionEvents: 2},
			evict: func(c *client, _ *fakeClock) {
				c.call("ping", nil) // priming + response: two newer events
			},
		},
		{
			name:  "expired",
			cfg:   Config{Retention: time.Minute},
			evict: func(_ *client, clock *fakeClock) { clock.Advance(time.Minute) },
		},
	} {
		for _, status := range []int{400, 409, -1} {
			t.Run(tc.name+"/"+strconv.Itoa(status), func(t *testing.T) {
				clock := newFakeClock()
				cfg := tc.cfg
				cfg.Now, cfg.UnknownCursorStatus = clock.Now, status
				srv, url := serve(t, cfg)
				c := newClient(t, url)
				resp := c.post("initialize", nil)
				c.session = resp.Header.Get("Mcp-Session-Id")
				a := readAnswer(t, resp)
				cursor := a.events[1].id

				tc.evict(c, clock)
				resp = c.get(cursor)
				if status == -1 {
					s := openStream(t, resp)
					if e := s.next(); e.data != "" || e.ID(t) <= a.events[1].ID(t) {
						t.Fatalf("first event %+v: want a fresh priming event", e)
					}
					if got := srv.Stats().EventsReplayed; got != 0 {
						t.Fatalf("replayed %d events", got)
					}
				} else if resp.StatusCode != status {
					t.Fatalf("unknown cursor, session live: status %d, want %d", resp.StatusCode, status)
				}

				// Cursor gone and session dead: the dead status, even permissive.
				if resp := c.request(http.MethodDelete, ""); resp.StatusCode != http.StatusOK {
					t.Fatalf("DELETE: %d", resp.StatusCode)
				}
				if resp := c.get(cursor); resp.StatusCode != http.StatusNotFound {
					t.Fatalf("unknown cursor, session dead: status %d, want 404", resp.StatusCode)
				}
			})
		}
	}
}

func TestNonNumericCursorIsUnknown(t *testing.T) {
	_, url := serve(t, Config{})
	c := mustInit(t, url)
	if resp := c.get("abc"); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
}

func TestCursorOfAnotherSessionIsUnknown(t *testing.T) {
	_, url := serve(t, Config{})
	a, b := newClient(t, url), mustInit(t, url)
	resp := a.post("initialize", nil)
	a.session = resp.Header.Get("Mcp-Session-Id")
	cursor := readAnswer(t, resp).events[1].id
	if resp := b.get(cursor); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("another session's cursor: status %d, want 400 (never replay another session's stream)", resp.StatusCode)
	}
}

func TestDelete(t *testing.T) {
	clock := newFakeClock()
	srv, url := serve(t, Config{SessionTTL: time.Hour, Now: clock.Now})
	c := mustInit(t, url)
	deleted := clock.Advance(time.Minute)
	if resp := c.request(http.MethodDelete, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if at, dead := srv.DeathTime(c.session); !dead || !at.Equal(deleted) {
		t.Fatalf("DeathTime = %v, %v; want %v", at, dead, deleted)
	}
	clock.Advance(2 * time.Hour) // past the TTL: the death time stays the DELETE's
	if at, _ := srv.DeathTime(c.session); !at.Equal(deleted) {
		t.Fatalf("DeathTime moved to %v", at)
	}
	for _, method := range []string{http.MethodDelete, http.MethodGet} {
		if resp := c.request(method, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s after DELETE: %d, want 404", method, resp.StatusCode)
		}
	}
	if status, _ := c.status("ping"); status != http.StatusNotFound {
		t.Errorf("ping after DELETE: %d", status)
	}
	if st := srv.Stats(); st.SessionsDied != 1 || st.DeadRequests != 3 {
		t.Errorf("stats %+v", st)
	}
}

func TestDeathTimeOfUnknownAndLive(t *testing.T) {
	srv, url := serve(t, Config{SessionTTL: time.Hour})
	c := mustInit(t, url)
	for _, id := range []string{c.session, "nope", "00000000000000000000000000000000"} {
		if _, dead := srv.DeathTime(id); dead {
			t.Errorf("DeathTime(%q) says dead", id)
		}
	}
}

// TestPostStreamResumes: a POST's SSE answer is logged under its own stream,
// so a client that lost it resumes it with a GET and gets the rest, then the
// end of the stream. A disconnection is not a cancellation.
func TestPostStreamResumes(t *testing.T) {
	srv, url := serve(t, Config{SlowSteps: 3, SlowStep: 5 * time.Millisecond})
	c := mustInit(t, url)
	post := openStream(t, c.post("tools/call", map[string]any{"name": "slow", "_meta": map[string]any{"progressToken": 1}}))
	post.next()
	first := post.message()
	post.drop()

	resumed := openStream(t, c.get(first.id))
	if e := resumed.next(); e.id != first.id {
		t.Fatalf("priming %+v, want the cursor %s", e, first.id)
	}
	var last sseEvent
	for i := 2; i <= 3; i++ {
		msg, err := jsonrpc.DecodeMessage([]byte(resumed.message().data))
		if err != nil {
			t.Fatal(err)
		}
		var p progressParams
		if err := json.Unmarshal(msg.(*jsonrpc.Request).Params, &p); err != nil || p.Progress != i {
			t.Fatalf("progress %s (%v), want %d", msg.(*jsonrpc.Request).Params, err, i)
		}
	}
	last = resumed.message()
	msg, err := jsonrpc.DecodeMessage([]byte(last.data))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := msg.(*jsonrpc.Response); !ok {
		t.Fatalf("last event %s, want the response", last.data)
	}
	resumed.ends()

	// Resuming from the response itself: nothing to send, the stream ends.
	again := openStream(t, c.get(last.id))
	again.next()
	again.ends()
	// POST-stream resumes do not take the GET stream.
	openStream(t, c.get("")).next()
	if got := srv.Stats().SessionsLive; got != 1 {
		t.Errorf("live sessions %d", got)
	}
}

func TestReaperFreesMemory(t *testing.T) {
	const ttl, retention = 100 * time.Millisecond, 300 * time.Millisecond
	clock := newFakeClock()
	srv, url := serve(t, Config{SessionTTL: ttl, Retention: retention, Now: clock.Now})
	c := mustInit(t, url)
	key, _ := parseSessionKey(c.session)
	born := clock.Now()

	clock.Advance(ttl)
	eventually(t, "the reaper to bury the session", func() bool { return srv.sessions.get(key) == nil })
	if srv.logs.get(key) == nil {
		t.Fatal("the log went with the session; it must outlive it for the retention")
	}
	clock.Advance(retention)
	eventually(t, "the reaper to free the log", func() bool { return srv.logs.get(key) == nil })
	if at, dead := srv.DeathTime(c.session); !dead || !at.Equal(born.Add(ttl)) {
		t.Fatalf("DeathTime = %v, %v; want %v", at, dead, born.Add(ttl))
	}
	if st := srv.Stats(); st.SessionsLive != 0 || st.SessionsDied != 1 {
		t.Errorf("stats %+v", st)
	}
}
