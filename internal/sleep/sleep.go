// Package sleep is the one context-aware pause of mcpchaos: wait a while unless the run (its
// context) ends first. It keeps no state and starts no goroutine.
package sleep

import (
	"context"
	"time"
)

// For waits d, or until ctx ends; it reports whether the whole wait happened (false when ctx
// ended first, or had ended already). A d of zero or less does not wait.
func For(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
