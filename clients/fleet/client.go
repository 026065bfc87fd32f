package fleet

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// held is one session as a client holds it.
type held struct {
	s      *wire.Session
	ctx    context.Context // ends when the client abandons the session; ends its stream
	cancel context.CancelFunc

	replaced atomic.Bool // the client has initialized a newer session: sending with this one is a collision
	ranInto  atomic.Bool // counted once in sessions_dead
	settled  atomic.Bool // its false-healthy time is counted
	sourced  atomic.Bool // its death counted once by how its time was obtained
	declared atomic.Bool // counted once as a live session declared dead (declared.go)
	lib      libWatch    // what a client library did with it (library kinds; driver_lib_judge.go)
	// refusedSince: when its GET reconnects began to be refused as a stream already attached
	// (unix ns; 0: not refused), until one is accepted (refusals.go)
	refusedSince atomic.Int64
}

// Client is one simulated MCP client: one session at a time, one goroutine holding its GET
// stream (run), and request loops driven by the fleet's scheduler (tick).
type Client struct {
	f   *Fleet
	idx int

	mu      sync.Mutex
	cur     *held   // nil while (re)initializing
	mine    []*held // per request loop: the session that loop sends with (see Policy.SharesSession)
	state   metrics.State
	turns   []loopTurns  // per request loop: its place on the schedule
	sdk     *sdkClient   // the Go SDK session of a gosdk client (driver_gosdk.go); nil otherwise
	calls   atomic.Int64 // tool calls made: {{seq}} and progress tokens
	logical atomic.Int64 // logical calls begun: each names its retries alike (callKey)
	wasLive atomic.Bool  // the client has had a live session: later turns without one are calls not made
}

func (c *Client) setState(s metrics.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setStateLocked(s)
}

func (c *Client) setStateLocked(s metrics.State) {
	if s == metrics.StateLive {
		c.wasLive.Store(true)
	}
	if c.state != s {
		c.f.rec.Move(c.state, s)
		c.state = s
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
	if lvl := c.f.cfg.LogLevel; lvl != "" && s.Logging && !s.Stateless {
		// So that a server that logs sends log messages (the Go SDK sends none before it).
		if rep, err := s.SetLogLevel(ctx, lvl); err != nil || !rep.OK() {
			c.f.callFailed(rep, err, false)
		}
	}
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
	c.f.churn.watch(ctx, c, h) // churn.go: nothing unless the group churns
	return h, nil
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
			c.countDeath(h)
		} else if !dead && c.f.exactDeaths() {
			c.declaredLive(h) // the server's record has it alive (declared.go)
		}
	}
	c.settle(h, now)
	h.cancel()
	c.f.done(h.s)
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
	c.f.refusal(status)
	if c.f.dead(status) {
		c.f.refused(h.s, sent, c.idx)
	}
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
		c.countDeath(h)
	}
}

// countDeath counts h's death once, by how its time was obtained.
func (c *Client) countDeath(h *held) {
	if !h.sourced.CompareAndSwap(false, true) {
		return
	}
	switch c.f.deathSource(h.s) {
	case truth.DeathExact:
		c.f.deaths[0].Add(1)
	case truth.DeathFromTTL:
		c.f.deaths[1].Add(1)
	default:
		c.f.deaths[2].Add(1)
	}
}

// apply applies n server events of h, read on a stream opened at opened, to client state.
// They are stale when the stream was opened after the session had died: a replay (or a
// reconnect) that the server answered from its log for a dead session, the seed's trap. An
// event sent on a stream opened while the session lived, and read in the instant after its
// death (a replica that drains while it restarts), was not replayed: the client could not
// have known, and MISSION counts only replayed events as stale.
func (c *Client) apply(h *held, n int, opened time.Time) {
	if n == 0 {
		return
	}
	c.f.rec.Add(metrics.EventsApplied, int64(n))
	if since, dead := c.f.truth.DeadSince(h.s.ID); dead && !since.After(opened) {
		c.f.rec.Add(metrics.StaleEventsApplied, int64(n))
	}
}

// probe sends the group's liveness probe on h.
func (c *Client) probe(h *held) policy.ProbeResult {
	c.f.rec.Inc(metrics.ProbesSent)
	sent := time.Now()
	var rep *wire.Reply
	var err error
	if c.f.cfg.Probe == "tools/list" {
		rep, err = h.s.ListTools(h.ctx)
	} else {
		rep, err = h.s.Ping(h.ctx)
	}
	c.f.rec.Record(metrics.ProbeLatency, c.idx, time.Since(sent))
	r := policy.ProbeResult{Err: err}
	if rep != nil {
		if rep.Status/100 == 2 {
			c.f.served(h.s)
		}
		r.Status = rep.Status
		r.Dead = c.f.deadReply(rep)
		if rep.Status/100 == 2 && rep.RPCError != nil && err == nil {
			r.Err = &wire.StatusError{Status: rep.Status, RPC: rep.RPCError}
		}
	}
	if err != nil && h.ctx.Err() == nil {
		wire.Count(c.f.rec, err)
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

// callTool sends the group's tool call with args, with a progress token unless the group
// turned them off: a server that reports progress then answers with an SSE reply whose events
// carry ids, which gives the session a cursor.
//
// call names the logical call (callKey): the same on every retry and re-issue of it.
func (c *Client) callTool(ctx context.Context, s *wire.Session, args any, call string) (*wire.Reply, error) {
	seq := c.calls.Add(1)
	token := ""
	if !c.f.cfg.NoProgressTokens {
		token = fmt.Sprintf("mcpchaos-%s-%d-%d", c.f.cfg.Name, c.idx, seq)
	}
	return s.CallToolAs(ctx, c.f.tool(), args, token, call)
}

// callKey names a new logical call of the client, "GROUP/CLIENT/N": what a server counting
// executions per call (the reference server) groups its runs by.
func (c *Client) callKey() string {
	return fmt.Sprintf("%s/%d/%d", c.f.cfg.Name, c.idx, c.logical.Add(1))
}

// answered counts a tool call that got a result: a success, or a tool error (isError), which is
// the tool's own answer and never a session failure.
func (c *Client) answered(ctx context.Context, rep *wire.Reply, sent time.Time) {
	now := time.Now()
	c.f.rec.Record(metrics.ToolCallLatency, c.idx, now.Sub(sent))
	c.f.rec.Record(metrics.DispatchLag, c.idx, rep.Lag) // the part of that sample that was the generator's
	noteAnswered(ctx, now)
	if rep.ToolError() {
		c.f.rec.Inc(metrics.ToolErrors)
		c.f.sample("tool error: " + clip(string(rep.Result), 200))
		return
	}
	c.f.rec.Inc(metrics.ToolCallsOK)
}

func (c *Client) deadNow(h *held) bool {
	_, dead := c.f.truth.DeadSince(h.s.ID)
	return dead
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
		if status, err := h.s.Delete(ctx); err == nil && status/100 == 2 {
			c.f.rec.Inc(metrics.SessionsClosed)
		}
	}
	c.f.done(h.s)
}

// connectLoop is every driver's connect-and-retry loop: connect until it succeeds (each
// failure counted, then a pause doubling from the group's reconnect delay up to its maximum),
// hold what it connected, and start over with the first pause again, until ctx ends. hold
// returns true when the client goes on in goroutines of its own and the loop is done.
func connectLoop[S any](ctx context.Context, c *Client, connect func(context.Context) (S, error), hold func(S) (handedOn bool)) {
	b := newBackoff(c.f.cfg.ReconnectDelay, c.f.cfg.ReconnectMax)
	for ctx.Err() == nil {
		s, err := connect(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.f.failed(err)
			}
			sleep.For(ctx, b.next())
			continue
		}
		b.reset()
		if hold(s) {
			return
		}
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
