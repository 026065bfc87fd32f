package sleep

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// On synctest's fake clock: the whole wait, a wait cut by the context, and the edge cases.
func TestFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !For(context.Background(), time.Second) || time.Since(start) != time.Second {
			t.Errorf("a whole wait: %v after %s", false, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start = time.Now()
		if For(ctx, time.Hour) || time.Since(start) != 300*time.Millisecond {
			t.Errorf("a wait cut by the context after %s", time.Since(start))
		}
		if For(ctx, 0) || For(ctx, -time.Second) {
			t.Error("an ended context: a zero wait reported whole")
		}
		if !For(context.Background(), 0) {
			t.Error("a zero wait on a live context")
		}
	})
}
