package refserver

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Under TTLMode absolute a session dies a TTL after initialize however active it is (a
// gateway's session lifetime cap): pings every third of the TTL do not keep it; under the
// default sliding mode the same pings do. The clock is fake, so the bounds are exact.
func TestAbsoluteTTLIgnoresActivity(t *testing.T) {
	const ttl = 90 * time.Millisecond
	for _, mode := range []string{TTLSliding, TTLAbsolute} {
		t.Run(mode, func(t *testing.T) {
			clock := newFakeClock()
			srv, url := serve(t, Config{SessionTTL: ttl, TTLMode: mode, Now: clock.Now})
			c := mustInit(t, url)
			born := clock.Now()
			for range 2 {
				clock.Advance(ttl / 3)
				if status, _ := c.status("ping"); status != http.StatusOK {
					t.Fatalf("ping before the TTL: %d", status)
				}
			}
			clock.Advance(ttl / 3) // a TTL since initialize, a third since the last ping
			at, dead := srv.DeathTime(c.session)
			switch mode {
			case TTLAbsolute:
				if !dead || !at.Equal(born.Add(ttl)) {
					t.Fatalf("DeathTime = %v, %v; want %v (initialize + TTL, the pings notwithstanding)", at, dead, born.Add(ttl))
				}
				if status, _ := c.status("ping"); status != http.StatusNotFound {
					t.Fatalf("ping a TTL after initialize: %d, want 404", status)
				}
			default:
				if dead {
					t.Fatalf("dead at %v though pinged a third of the TTL ago", at)
				}
			}
		})
	}
}

func TestTTLModeValidated(t *testing.T) {
	err := Config{SessionTTL: time.Second, TTLMode: "fixed"}.Validate()
	if err == nil || !strings.Contains(err.Error(), `ttl mode "fixed": want "sliding" or "absolute"`) {
		t.Fatalf("Validate: %v", err)
	}
}
