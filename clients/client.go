package clients

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// held is one session as a client holds it.
type held struct {
	s      *Session
	ctx    context.Context // ends when the client abandons the session; ends its stream
	cancel context.CancelFunc

	replaced atomic.Bool // the client has initialized a newer session: sending with this one is a collision
	ranInto  atomic.Bool // counted once in sessions_dead
	settled  atomic.Bool // its false-healthy time is counted
}

// Client is one simulated MCP client: one session at a time, one goroutine holding its GET
// stream (run), and request loops driven by the fleet's scheduler (tick).
type Client struct {
	f   *Fleet
	idx int

	mu    sync.Mutex
	cur   *held   // nil while (re)initializing
	mine  []*held // per request loop: the session that loop sends with (see Policy.SharesSession)
	state metrics.State
	busy  []atomic.Bool // per request loop: a tick is running
	sdk   *sdkClient    // the Go SDK session of a gosdk client (gosdk.go); nil otherwise
}

func (c *Client) setState(s metrics.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setStateLocked(s)
}

func (c *Client) setStateLocked(s metrics.State) {
	if c.state != s {
		c.f.rec.Move(c.state, s)
		c.state = s
	}
}

// run initializes a session and starts holding it; it starts over (in a new goroutine) whenever
// the session is abandoned, until ctx ends. wg counts the client's goroutines.
//
// A client is a chain of goroutines rather than one: whichever goroutine opened a stream hands
// the reading to a fresh goroutine and ends. A goroutine keeps the largest stack it ever
// needed, and initialize and reconnects need far more than reading an SSE stream: measured with
// `mcpchaos bench`, a held session cost a 16 KiB stack on one long-lived goroutine, and 8 KiB
// this way.
func (c *Client) run(ctx context.Context, wg *sync.WaitGroup) {
	defer wg.Done()
	defer guard.Catch(ctx, "client "+c.f.cfg.Name)
	if c.f.sdkMode() {
		c.runSDK(ctx) // the Go SDK's client holds the session (gosdk.go)
		return
	}
	backoff := newBackoff(c.f.cfg.ReconnectDelay, c.f.cfg.ReconnectMax)
	for ctx.Err() == nil {
		h, err := c.initialize(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.f.rec.Error(Kind(err))
			}
			sleep(ctx, backoff.next())
			continue
		}
		backoff.reset()
		if st := c.openFirst(h); st != nil {
			c.readOn(ctx, wg, &reading{h: h, st: st})
			return
		}
		<-h.ctx.Done() // no stream to hold (the server offers none, or the session died)
	}
}

// restart starts a new session in a new goroutine, unless the run is over.
func (c *Client) restart(ctx context.Context, wg *sync.WaitGroup) {
	if ctx.Err() == nil {
		wg.Add(1)
		go c.run(ctx, wg)
	}
}

// initialize opens a new session and makes it the client's current one.
func (c *Client) initialize(ctx context.Context) (*held, error) {
	s, _, err := c.f.ep.Initialize(ctx)
	if err != nil {
		return nil, err
	}
	c.f.rec.Inc(metrics.SessionsStarted)
	c.f.served(s)
	c.f.noteProtocol(s.Protocol)
	h := &held{s: s}
	h.ctx, h.cancel = context.WithCancel(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.mine {
		if m != nil {
			m.replaced.Store(true)
		}
	}
	if c.cur != nil { // cannot happen: a session is abandoned before the next starts
		c.cur.replaced.Store(true)
	}
	c.cur = h
	c.setStateLocked(metrics.StateLive)
	return h, nil
}

// current returns the client's session if it is usable for requests now.
func (c *Client) current() *held {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != metrics.StateLive {
		return nil
	}
	return c.cur
}

// abandon ends the client's belief in h: h's stream ends, and run initializes a new session.
// detected says whether the client classified h dead (as opposed to giving up on it after a
// surfaced failure). allLoops resets every request loop to the next session (the client knows);
// otherwise loops keep h until their own failure (the seed's stale coroutine).
func (c *Client) abandon(h *held, detected, allLoops bool) {
	c.mu.Lock()
	if allLoops {
		clear(c.mine)
	}
	if c.cur != h {
		c.mu.Unlock()
		return
	}
	c.cur = nil
	c.setStateLocked(metrics.StateReinit)
	c.mu.Unlock()
	now := time.Now()
	if detected {
		c.f.rec.Inc(metrics.SessionsDeadDetected)
		if d, dead := c.f.truth.DeadSince(h.s.ID); dead && !d.After(now) {
			c.f.rec.Record(metrics.DetectionDelay, c.idx, now.Sub(d))
		}
	}
	c.settle(h, now)
	h.cancel()
}

// settle counts the time the client believed h alive after it had died.
func (c *Client) settle(h *held, now time.Time) {
	if !h.settled.CompareAndSwap(false, true) {
		return
	}
	if d, dead := c.f.truth.DeadSince(h.s.ID); dead && d.Before(now) {
		c.f.rec.AddFalseHealthy(now.Sub(d))
	}
}

// account counts a request sent with h's id if the session was already dead: the server had to
// answer it from its session store (a dead status), or it failed in transport after the death.
// A 2xx answer means the session was alive when the request arrived.
func (c *Client) account(h *held, sent time.Time, status int, retry bool) {
	d, dead := c.f.truth.DeadSince(h.s.ID)
	if !dead || status/100 == 2 || (status == 0 && d.After(sent)) {
		return
	}
	c.f.rec.Inc(metrics.DeadSessionRequests)
	if retry {
		c.f.rec.Inc(metrics.RetriesAgainstDead)
	}
	if h.ranInto.CompareAndSwap(false, true) {
		c.f.rec.Inc(metrics.SessionsDead)
	}
}

// apply applies n server events of h to client state; applied events of an already dead
// session are stale.
func (c *Client) apply(h *held, n int) {
	if n == 0 {
		return
	}
	c.f.rec.Add(metrics.EventsApplied, int64(n))
	if _, dead := c.f.truth.DeadSince(h.s.ID); dead {
		c.f.rec.Add(metrics.StaleEventsApplied, int64(n))
	}
}

// probe sends the group's liveness probe on h.
func (c *Client) probe(h *held) ProbeResult {
	c.f.rec.Inc(metrics.ProbesSent)
	sent := time.Now()
	var rep *Reply
	var err error
	if c.f.cfg.Probe == "tools/list" {
		rep, err = h.s.ListTools(h.ctx)
	} else {
		rep, err = h.s.Ping(h.ctx)
	}
	c.f.rec.Record(metrics.ProbeLatency, c.idx, time.Since(sent))
	r := ProbeResult{Err: err}
	if rep != nil {
		if rep.Status/100 == 2 {
			c.f.served(h.s)
		}
		r.Status = rep.Status
		r.Dead = c.f.dead(rep.Status)
		if rep.Status/100 == 2 && rep.RPCError != nil && err == nil {
			r.Err = &StatusError{Status: rep.Status, RPC: rep.RPCError}
		}
	}
	if err != nil && h.ctx.Err() == nil {
		c.f.rec.Error(Kind(err))
	}
	c.account(h, sent, r.Status, false)
	return r
}

// sessionFor returns the session request loop k sends with, or nil when it should skip.
func (c *Client) sessionFor(k int) *held {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := c.state == metrics.StateLive
	if c.f.policy.SharesSession() {
		if !live {
			return nil
		}
		return c.cur
	}
	if c.mine[k] == nil {
		if !live {
			return nil
		}
		c.mine[k] = c.cur
	}
	return c.mine[k]
}

// dropLoopSession makes loop k forget its session; if it was still the client's current one,
// the client gives up on it and re-initializes (the application's reaction to a tool failure).
func (c *Client) dropLoopSession(k int, h *held) {
	c.mu.Lock()
	c.mine[k] = nil
	c.mu.Unlock()
	c.abandon(h, false, false)
}

// tick runs one application request of loop k: a tool call with the policy's retries.
func (c *Client) tick(ctx context.Context, k int) {
	switch {
	case c.f.ep.Generation == Stateless:
		c.tickStateless(ctx, k) // stateless.go
		return
	case c.f.sdkMode():
		c.tickSDK(ctx, k) // gosdk.go
		return
	}
	h := c.sessionFor(k)
	if h == nil {
		return
	}
	cfg := &c.f.cfg
	for attempt := 1; ; attempt++ {
		if h.replaced.Load() {
			c.f.rec.Inc(metrics.ReinitCollisions)
		}
		sent := time.Now()
		rep, err := h.s.CallTool(ctx, cfg.Tool, c.f.toolArgs)
		if ctx.Err() != nil {
			return // the run is over; an interrupted call is not a failure
		}
		f := Failure{Attempt: attempt, Err: err}
		if rep != nil {
			if rep.Status/100 == 2 {
				c.f.served(h.s)
			}
			f.Status = rep.Status
			f.Dead = c.f.dead(rep.Status)
			if err == nil && rep.OK() && !toolError(rep.Result) {
				c.f.rec.Record(metrics.ToolCallLatency, c.idx, time.Since(sent))
				c.f.rec.Inc(metrics.ToolCallsOK)
				return
			}
		}
		if err != nil {
			c.f.rec.Error(Kind(err))
		} else if !f.Dead && f.Status/100 != 2 {
			c.f.rec.Error(metrics.ErrStatus)
		}
		c.account(h, sent, f.Status, attempt > 1)
		switch c.f.policy.AfterFailure(f) {
		case Retry:
			if !sleep(ctx, cfg.RetryBackoff<<min(attempt-1, 6)) {
				return
			}
		case SessionDead:
			c.abandon(h, true, true)
			return
		case SurfaceFailure:
			c.f.rec.Inc(metrics.ToolCallsFailed)
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

func (c *Client) deadNow(h *held) bool {
	_, dead := c.f.truth.DeadSince(h.s.ID)
	return dead
}

// toolError reports whether a tools/call result says isError.
func toolError(result json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(result, &r) == nil && r.IsError
}

// finish counts the end of the run for the client's current session and ends it politely.
func (c *Client) finish(ctx context.Context, end time.Time) {
	c.mu.Lock()
	h := c.cur
	c.setStateLocked(metrics.StateStopped)
	c.mu.Unlock()
	if h == nil {
		return
	}
	c.settle(h, end)
	if !c.deadNow(h) {
		_, _ = h.s.Delete(ctx)
	}
}

// sleep waits d or until ctx ends; it reports whether the full wait happened.
func sleep(ctx context.Context, d time.Duration) bool {
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

// backoff doubles a delay from base up to ceiling.
type backoff struct{ base, ceiling, cur time.Duration }

func newBackoff(base, ceiling time.Duration) *backoff {
	return &backoff{base: base, ceiling: ceiling}
}

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.base
	} else {
		b.cur = min(2*b.cur, b.ceiling)
	}
	return b.cur
}

func (b *backoff) reset() { b.cur = 0 }
