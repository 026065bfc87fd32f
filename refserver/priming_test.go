package refserver

import (
	"net/http"
	"testing"
	"time"
)

// A client of 2025-11-25 gets a priming event (an id, empty data) first on every stream; an
// older client gets none, since its SDK may take the empty data for a message, only the retry
// field.
func TestPrimingOnlyFor20251125(t *testing.T) {
	_, url := serve(t, Config{SessionTTL: time.Minute, Retention: 2 * time.Minute, Retry: 300 * time.Millisecond}.WithDefaults())
	for _, tc := range []struct {
		version string
		primes  bool
	}{{"2025-11-25", true}, {"2025-06-18", false}, {"2025-03-26", false}} {
		t.Run(tc.version, func(t *testing.T) {
			c := newClient(t, url)
			resp := c.post("initialize", map[string]any{"protocolVersion": tc.version})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("initialize: %d", resp.StatusCode)
			}
			c.session, c.version = resp.Header.Get("Mcp-Session-Id"), tc.version
			readAnswer(t, resp)
			a := c.call("ping", nil)
			primed := len(a.events) > 0 && a.events[0].data == "" && a.events[0].id != ""
			if primed != tc.primes {
				t.Errorf("the ping reply's events %+v: priming %t, want %t", a.events, primed, tc.primes)
			}
			s := openStream(t, c.get(""))
			if e := s.next(); (e.data == "" && e.id != "") != tc.primes {
				t.Errorf("the GET stream's first event %+v: priming want %t", e, tc.primes)
			}
		})
	}
}
