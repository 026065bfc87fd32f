package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The health watcher on synctest's fake clock: its ticker, its dial (a fake that fails while
// the test says the target is down, and takes the time the test says) and its dating of an
// outage, with exact times.
func TestHealthWatcherOnAFakeClock(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name       string
		downFrom   time.Duration
		downUntil  time.Duration // 0: to the end
		dialTakes  time.Duration
		want       string // the one problem line; "" for none
		wantFatal  bool
		wantChecks int // exactly; at least, for dials that outlast the run (the ticker and the
		// run's end are then both ready, and the watcher may take either first)
	}{
		{name: "an outage and a recovery", downFrom: 2500 * time.Millisecond, downUntil: 6500 * time.Millisecond,
			want: "target unreachable from 3.0s to 7.0s", wantChecks: 9},
		{name: "down to the end", downFrom: 2500 * time.Millisecond,
			want: "target unreachable from 3.0s to the end", wantFatal: true, wantChecks: 9},
		{name: "down for fewer checks than an outage needs", downFrom: 2500 * time.Millisecond, downUntil: 4500 * time.Millisecond, wantChecks: 9},
		// Every dial fails but takes 5s, over twice its own 2s timeout: the process was
		// starved, so its failures say nothing about the target.
		{name: "a starved watcher's failures", downFrom: 0, dialTakes: 5 * s, wantChecks: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				checks := 0
				h := &health{start: start, dialAddr: "target:443", dial: func(addr string, timeout time.Duration) error {
					checks++
					el := time.Since(start)
					time.Sleep(tc.dialTakes)
					if el >= tc.downFrom && (tc.downUntil == 0 || el < tc.downUntil) {
						return errors.New("connection refused")
					}
					return nil
				}}
				ctx, cancel := context.WithDeadline(context.Background(), start.Add(9500*time.Millisecond))
				defer cancel()
				h.run(ctx, s) // checks at 1s, 2s, ... 9s
				lines, fatal := h.problems()
				switch {
				case tc.want == "" && len(lines) != 0:
					t.Errorf("problems %q, want none", lines)
				case tc.want != "" && (len(lines) != 1 || !strings.HasPrefix(lines[0], tc.want)):
					t.Errorf("problems %q, want %q", lines, tc.want)
				}
				if fatal != tc.wantFatal || checks < tc.wantChecks || tc.dialTakes == 0 && checks != tc.wantChecks {
					t.Errorf("fatal %v after %d checks, want %v after %d", fatal, checks, tc.wantFatal, tc.wantChecks)
				}
			})
		})
	}
}
