package fleet

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet/drive"
	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Churn makes a group's clients come and go, as the clients of a real MCP server do: each
// ends its session Every after opening it and opens a new one. A share of them (Abandon)
// never sends DELETE: it just stops using the session, and only the server's idle TTL can
// reclaim it; the rest DELETE theirs. This is what leaks sessions on a server that never
// expires them (docs/session-leaks.md).
type Churn struct {
	Every   time.Duration // how long a client keeps a session before ending it; 0: no churn
	Abandon float64       // the share of sessions ended without DELETE, 0..1
	// On says, for a time since the start, whether clients churn then (the workload's
	// churn.during phases); nil: always. Outside it a client keeps its session.
	On func(elapsed time.Duration) bool
}

// churner ends the group's sessions on Churn's schedule. It holds a timer per live session
// (no goroutine while it waits); wg counts the ends under way, which Run waits for before it
// settles the clients.
type churner struct {
	cfg     Churn
	clients int
	start   time.Time      // the run's start; set by Run before any client starts
	ends    []atomic.Int64 // per client: sessions it has ended by churn
	wg      sync.WaitGroup
}

func newChurner(cfg Churn, clients int) *churner {
	if cfg.Every <= 0 {
		return nil
	}
	cfg.Abandon = min(max(cfg.Abandon, 0), 1)
	return &churner{cfg: cfg, clients: clients, ends: make([]atomic.Int64, clients)}
}

// watch arms the end of h, the session c just opened. A session that ends otherwise (its
// death, the end of the run) disarms it. Outside the churn phases the one timer is re-armed,
// so a session held through a long phase costs one timer, not one per period.
func (ch *churner) watch(ctx context.Context, c *Client, h *drive.Held) {
	if ch == nil {
		return
	}
	ready := make(chan struct{}) // t is set before the timer's function reads it
	var t *time.Timer
	ch.wg.Add(1)
	t = time.AfterFunc(ch.cfg.Every, func() {
		<-ready
		defer ch.wg.Done()
		if ch.end(ctx, c, h) {
			return
		}
		ch.wg.Add(1)
		t.Reset(ch.cfg.Every)
		if h.Ctx.Err() != nil && t.Stop() { // disarmed while it was re-armed
			ch.wg.Done()
		}
	})
	close(ready)
	context.AfterFunc(h.Ctx, func() {
		if t.Stop() {
			ch.wg.Done()
		}
	})
}

// end ends h if the client churns now and h is still its session: without DELETE for the
// abandoned share, with DELETE (after the client's calls in flight on it) for the rest. The
// client then opens a new session, as after any session it let go of. False: not a churn
// phase, ask again later.
func (ch *churner) end(ctx context.Context, c *Client, h *drive.Held) bool {
	if ctx.Err() != nil || h.Ctx.Err() != nil {
		return true
	}
	if ch.cfg.On != nil && !ch.cfg.On(time.Since(ch.start)) {
		return false
	}
	if !c.detach(h) {
		return true
	}
	if ch.abandons(c.idx, ch.ends[c.idx].Add(1)-1) {
		c.f.rec.Inc(metrics.SessionsAbandoned)
	} else {
		c.awaitLoops(ctx, c.f.ep.RequestTimeout)
		if status, err := h.S.Delete(ctx); err == nil && status/100 == 2 {
			c.f.rec.Inc(metrics.SessionsClosed)
		} else if err != nil && ctx.Err() == nil {
			c.f.failed(err)
		}
	}
	c.retire(h)
	return true
}

// abandons says whether client i's n-th churned session (from 0) is left without DELETE. The
// choice is spread evenly (each client's running share stays within one session of
// Abandon) and offset per client, so that the clients do not abandon in step.
func (ch *churner) abandons(i int, n int64) bool {
	off := float64(i) / float64(max(ch.clients, 1))
	a := ch.cfg.Abandon
	return math.Floor(float64(n+1)*a+off) > math.Floor(float64(n)*a+off)
}

// detach stops the client from sending on h: it is no longer the current session nor any
// request loop's; false if it was not the current one (the client had let go of it already).
func (c *Client) detach(h *drive.Held) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != h {
		return false
	}
	for k, m := range c.mine {
		if m == h {
			c.mine[k] = nil
		}
	}
	c.cur = nil
	c.setStateLocked(metrics.StateReinit)
	return true
}

// retire lets go of a detached session: its stream ends, and the client's holder opens the
// next session.
func (c *Client) retire(h *drive.Held) {
	c.Settle(h, time.Now())
	h.Cancel()
	c.f.done(h.S)
}

// awaitLoops waits, at most limit, until none of the client's request loops has a call
// running: a client that closes a session lets its calls finish first.
func (c *Client) awaitLoops(ctx context.Context, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for k := range c.turns {
		for c.turns[k].running() && time.Now().Before(deadline) {
			if !sleep.For(ctx, 5*time.Millisecond) {
				return
			}
		}
	}
}

// running says whether the loop has a call running.
func (l *loopTurns) running() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.busy
}
