package drive

import (
	"context"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/sleep"
)

// ConnectLoop is every driver's connect-and-retry loop: connect until it succeeds (each
// failure counted in e's books, then a pause doubling from the group's reconnect delay up to
// its maximum), hold what it connected, and start over with the first pause again, until ctx
// ends. hold returns true when the client goes on in goroutines of its own and the loop is
// done.
func ConnectLoop[S any](ctx context.Context, e *Env, connect func(context.Context) (S, error), hold func(S) (handedOn bool)) {
	b := NewBackoff(e.ReconnectDelay, e.ReconnectMax)
	for ctx.Err() == nil {
		s, err := connect(ctx)
		if err != nil {
			if ctx.Err() == nil {
				e.Books.Failed(err)
			}
			sleep.For(ctx, b.Next())
			continue
		}
		b.Reset()
		if hold(s) {
			return
		}
	}
}

// Backoff doubles a delay from base up to ceiling.
type Backoff struct{ base, ceiling, cur time.Duration }

// NewBackoff starts a backoff at base.
func NewBackoff(base, ceiling time.Duration) *Backoff {
	return &Backoff{base: base, ceiling: ceiling}
}

// Next is the next pause: base, then twice the last, up to the ceiling.
func (b *Backoff) Next() time.Duration {
	if b.cur == 0 {
		b.cur = b.base
	} else {
		b.cur = min(2*b.cur, b.ceiling)
	}
	return b.cur
}

// Reset starts over from base.
func (b *Backoff) Reset() { b.cur = 0 }
