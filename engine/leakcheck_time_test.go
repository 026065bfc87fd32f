package engine

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpchaos/mcpchaos/refserver"
)

// The session-leak check's windows on synctest's fake clock: it reads nothing before the TTL
// has passed since the churn, then polls every leakPoll until the server's sessions come back
// to the clients' or its window closes. The server's and the clients' counts are fakes set by
// the test at exact moments.
func TestLeakCheckWindowsOnAFakeClock(t *testing.T) {
	s := time.Second
	lc := leakCheck{from: 3 * s, until: 9 * s, ttl: 2 * s, runEnd: 10 * s}
	for _, tc := range []struct {
		name      string
		reclaimAt time.Duration // when the server's sessions fall to the clients'; 0: never
		interrupt time.Duration // 0: none
		judged    bool
		pass      bool
		atS       float64
		verdict   string
	}{
		{name: "reclaimed after the TTL", reclaimAt: 5500 * time.Millisecond, judged: true, pass: true, atS: 5.5, verdict: "passed: the server holds 4 sessions, the clients 4"},
		{name: "reclaimed before the check may judge", reclaimAt: s, judged: true, pass: true, atS: 3, verdict: "passed"},
		{name: "never reclaimed", judged: true, atS: 9, verdict: "LEAK: the server still holds 10 sessions a TTL (2s) after the churn, while the clients hold 4: 6 never reclaimed"},
		{name: "interrupted before the TTL", interrupt: 2 * s, verdict: "not judged: the run ended before the TTL had passed"},
		{name: "interrupted while the server holds more", interrupt: 4010 * time.Millisecond, atS: 4, verdict: "not judged: the run ended while the server still held more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var reads atomic.Int64
				server := func() refserver.Stats {
					reads.Add(1)
					held := int64(10)
					if tc.reclaimAt > 0 && time.Since(start) >= tc.reclaimAt {
						held = 4
					}
					return refserver.Stats{SessionsHeld: held, SessionsCreated: 10, SessionsExpired: 10 - held}
				}
				clients := func() int64 {
					if time.Since(start) < lc.from {
						t.Errorf("the clients were read at %s, before the check may judge (%s)", time.Since(start), lc.from)
					}
					return 4
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.interrupt > 0 {
					time.AfterFunc(tc.interrupt, cancel)
				}
				out := judgeLeak(ctx, start, lc, server, clients)
				if out.Judged != tc.judged || out.Pass != tc.pass || out.AtSeconds != tc.atS || !strings.HasPrefix(out.Verdict, tc.verdict) {
					t.Errorf("judged %v pass %v at %vs: %q\nwant judged %v pass %v at %vs: %q...", out.Judged, out.Pass, out.AtSeconds, out.Verdict,
						tc.judged, tc.pass, tc.atS, tc.verdict)
				}
				if !tc.pass && tc.interrupt == 0 {
					// polled every leakPoll from 3s to 9s inclusive, and once more for the totals
					if want := int64((lc.until-lc.from)/leakPoll) + 2; reads.Load() != want {
						t.Errorf("the server was read %d times, want %d (every %s within the window)", reads.Load(), want, leakPoll)
					}
				}
			})
		})
	}
}

// A run that ends before the TTL can pass since the churn is not judged, and says what to
// change, at once.
func TestLeakCheckTooShortToJudge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		lc := leakCheck{from: 8 * time.Second, until: 5 * time.Second, ttl: 5 * time.Second, runEnd: 6 * time.Second}
		out := judgeLeak(context.Background(), start, lc, func() refserver.Stats {
			t.Error("read the server")
			return refserver.Stats{}
		}, func() int64 { return 0 })
		if time.Since(start) != 0 || out.Judged || !strings.Contains(out.Verdict, "the run ends 4s after the clients last churned") {
			t.Errorf("after %s: %+v", time.Since(start), out)
		}
	})
}
