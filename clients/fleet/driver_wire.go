package fleet

import (
	"context"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// wireDriver runs clients on mcpchaos's own wire session (package wire), whose every decision
// after a drop or a failure is the group's Policy: the seed's naive client and its decision
// rule. Its stream handling is in driver_wire_stream.go.
type wireDriver struct{}

func (wireDriver) notObservable() []string { return nil }

// hold initializes a session and starts holding its GET stream; it starts over (in a new
// goroutine) whenever the session is abandoned.
//
// A client is a chain of goroutines rather than one: whichever goroutine opened a stream hands
// the reading to a fresh goroutine and ends. A goroutine keeps the largest stack it ever
// needed, and initialize and reconnects need far more than reading an SSE stream: measured with
// `mcpchaos bench`, a held session cost a 16 KiB stack on one long-lived goroutine, and 8 KiB
// this way.
func (wireDriver) hold(ctx context.Context, c *Client, wg *sync.WaitGroup) {
	connectLoop(ctx, c, c.initialize, func(h *held) bool {
		if c.f.cfg.Arguments == nil && !h.s.Stateless {
			// Learn the tool's arguments now, as clients list tools after initialize, so that
			// the first calls do not wait for tools/list.
			_, _ = c.f.arguments(ctx, c, c.f.listTools(h.s))
		}
		if st := c.openFirst(h); st != nil {
			c.readOn(ctx, wg, &reading{h: h, st: st, opened: time.Now()})
			return true
		}
		<-h.ctx.Done() // no stream to hold (the server offers none, or the session died)
		return false
	})
}

// tick runs one application request of loop k: a tool call with the policy's retries.
func (wireDriver) tick(ctx context.Context, c *Client, k int) {
	h := c.sessionFor(k)
	if h == nil {
		c.f.notMade(ctx, c) // reconnecting or re-initializing: the turn passes without a call
		return
	}
	args, err := c.f.arguments(ctx, c, c.f.listTools(h.s))
	if err != nil {
		if ctx.Err() == nil {
			c.f.argsFailed(err)
		}
		return
	}
	cfg := &c.f.cfg
	call := c.callKey()
	for attempt := 1; ; attempt++ {
		if h.replaced.Load() {
			c.f.rec.Inc(metrics.ReinitCollisions)
		}
		sent := time.Now()
		rep, err := c.callTool(ctx, h.s, args, call)
		if ctx.Err() != nil {
			return // the run is over; an interrupted call is not a failure
		}
		f := policy.Failure{Attempt: attempt, Err: err}
		if rep != nil {
			if rep.Status/100 == 2 {
				c.f.served(h.s)
			}
			f.Status = rep.Status
			f.Dead = c.f.deadReply(rep)
			if err == nil && rep.OK() {
				c.answered(ctx, rep, sent)
				return
			}
		}
		c.f.callFailed(rep, err, f.Dead)
		c.account(h, sent, f.Status, attempt > 1)
		switch c.f.policy.AfterFailure(f) {
		case policy.Retry:
			if !sleep.For(ctx, cfg.RetryBackoff<<min(attempt-1, 6)) {
				return
			}
		case policy.SessionDead:
			c.abandon(h, true, true)
			return
		case policy.SurfaceFailure:
			c.f.surfaced(rep, err, f.Dead)
			if f.Dead || (f.Status != 0 && c.deadNow(h)) {
				c.f.rec.Inc(metrics.MisattributedErrors)
			}
			if !c.f.policy.SharesSession() {
				c.dropLoopSession(k, h)
			}
			return
		}
	}
}
