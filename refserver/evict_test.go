package refserver

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// A log that keeps 2 events evicts the cursor of a live session's stream: with EvictedDead the
// resume gets the expiry answer while the session lives on (its ping says 200); the default
// answers it as an unknown cursor; a cursor still kept replays.
func TestEvictedCursorAnsweredDead(t *testing.T) {
	for _, tc := range []struct {
		mode       string
		wantStatus int
		wantCount  int64
	}{
		{EvictedDead, http.StatusNotFound, 1},
		{"", http.StatusBadRequest, 0}, // EvictedUnknown: UnknownCursorStatus
	} {
		t.Run(tc.mode, func(t *testing.T) {
			srv, url := serve(t, Config{SessionTTL: time.Hour, RetentionEvents: 2, EvictedCursor: tc.mode})
			c := mustInit(t, url)
			s := openStream(t, c.get(""))
			first := s.next() // priming: registered; the first cursor
			var last sseEvent
			for range 2 { // the second pushes the priming event out of a 2-event log
				srv.notifyAll(nil, -1)
				last = s.message()
			}
			s.drop()

			resp := c.get(first.id)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("resume from evicted cursor %s: status %d (%s), want %d", first.id, resp.StatusCode, body, tc.wantStatus)
			}
			if tc.wantStatus == http.StatusNotFound && string(body) != `{"error":"session expired"}` {
				t.Errorf("body %q: want the dead-session body, the same answer as expiry", body)
			}
			// A cursor the log still keeps replays as ever.
			kept := c.get(last.id)
			kept.Body.Close()
			if kept.StatusCode != http.StatusOK {
				t.Errorf("resume from a kept cursor: %d, want 200", kept.StatusCode)
			}
			if status, _ := c.status("ping"); status != http.StatusOK {
				t.Errorf("ping after the evicted resume: %d, want 200 (the session is alive)", status)
			}
			if _, dead := srv.DeathTime(c.session); dead {
				t.Error("the server recorded a death: the session is alive")
			}
			st := srv.Stats()
			if st.LiveResumesAnsweredDead != tc.wantCount || st.DeadRequests != 0 {
				t.Errorf("live resumes answered dead %d, dead requests %d; want %d, 0", st.LiveResumesAnsweredDead, st.DeadRequests, tc.wantCount)
			}
		})
	}
}

// A cursor never issued to the log (older than anything it evicted) is unknown, not evicted.
func TestEvictedCursorOnlyForEvictedIDs(t *testing.T) {
	_, url := serve(t, Config{SessionTTL: time.Hour, RetentionEvents: 2, EvictedCursor: EvictedDead})
	c := mustInit(t, url)
	resp := c.get("999999")
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("resume from a cursor no log evicted: %d, want 400 (unknown)", resp.StatusCode)
	}
}

func TestEvictedCursorValidate(t *testing.T) {
	err := Config{EvictedCursor: "gone"}.Validate()
	if err == nil || err.Error() != `target config: evicted cursor "gone": want "unknown" or "dead"` {
		t.Fatalf("Validate: %v", err)
	}
}
