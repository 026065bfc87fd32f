package wiredriver

import (
	"context"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet/drive"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Driver runs clients on mcpchaos's own wire session (package wire), whose every decision
// after a drop or a failure is the group's Policy: the seed's naive client and its decision
// rule. Its stream handling is in stream.go.
type Driver struct{ e *drive.Env }

// New is the wire session driver of the group e.
func New(e *drive.Env) *Driver { return &Driver{e: e} }

// NotObservable: the wire session shows every metric.
func (*Driver) NotObservable() []string { return nil }

// client is one client of the group as the wire drivers see it: its books, and the group's.
type client struct {
	drive.Client
	e *drive.Env
}

// Hold initializes a session and starts holding its GET stream; it starts over (in a new
// goroutine) whenever the session is abandoned.
//
// A client is a chain of goroutines rather than one: whichever goroutine opened a stream hands
// the reading to a fresh goroutine and ends. A goroutine keeps the largest stack it ever
// needed, and initialize and reconnects need far more than reading an SSE stream: measured with
// `mcpchaos bench`, a held session cost a 16 KiB stack on one long-lived goroutine, and 8 KiB
// this way.
func (d *Driver) Hold(ctx context.Context, dc drive.Client, wg *sync.WaitGroup) {
	c := client{dc, d.e}
	drive.ConnectLoop(ctx, c.e, c.Initialize, func(h *drive.Held) bool {
		if !c.e.OwnArguments && !h.S.Stateless {
			// Learn the tool's arguments now, as clients list tools after initialize, so that
			// the first calls do not wait for tools/list.
			_, _ = c.Arguments(ctx, drive.ListTools(c.e.Books, h.S))
		}
		if st := c.openFirst(h); st != nil {
			c.readOn(ctx, wg, &reading{h: h, st: st, opened: time.Now()})
			return true
		}
		<-h.Ctx.Done() // no stream to hold (the server offers none, or the session died)
		return false
	})
}

// Tick runs one application request of loop k: a tool call with the policy's retries.
func (d *Driver) Tick(ctx context.Context, dc drive.Client, k int) {
	c := client{dc, d.e}
	h := c.SessionFor(k)
	if h == nil {
		c.NotMade(ctx) // reconnecting or re-initializing: the turn passes without a call
		return
	}
	args, err := c.Arguments(ctx, drive.ListTools(c.e.Books, h.S))
	if err != nil {
		if ctx.Err() == nil {
			c.e.Books.ArgsFailed(err)
		}
		return
	}
	cfg := c.e
	call := c.CallKey()
	for attempt := 1; ; attempt++ {
		if h.Replaced.Load() {
			c.e.Rec.Inc(metrics.ReinitCollisions)
		}
		sent := time.Now()
		rep, err := c.CallTool(ctx, h.S, args, call)
		if ctx.Err() != nil {
			return // the run is over; an interrupted call is not a failure
		}
		f := policy.Failure{Attempt: attempt, Err: err}
		if rep != nil {
			if rep.Status/100 == 2 {
				c.e.Served(h.S)
			}
			f.Status = rep.Status
			f.Dead = c.e.DeadReply(rep)
			if err == nil && rep.OK() {
				c.Answered(ctx, rep, sent)
				return
			}
		}
		c.e.Books.CallFailed(rep, err, f.Dead)
		c.Account(h, sent, f.Status, attempt > 1)
		switch c.e.Policy.AfterFailure(f) {
		case policy.Retry:
			if !sleep.For(ctx, cfg.RetryBackoff<<min(attempt-1, 6)) {
				return
			}
		case policy.SessionDead:
			c.Abandon(h, true, true)
			return
		case policy.SurfaceFailure:
			c.e.Books.Surfaced(rep, err, f.Dead)
			if f.Dead || (f.Status != 0 && c.DeadNow(h)) {
				c.e.Rec.Inc(metrics.MisattributedErrors)
			}
			if !c.e.Policy.SharesSession() {
				c.DropLoopSession(k, h)
			}
			return
		}
	}
}
