package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet/drive"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Client is one simulated MCP client: one session at a time, held by its driver (run), and
// request loops driven by the fleet's scheduler (the driver's Tick). It is the drive.Client
// its driver moves and counts through: its exported methods are exactly the contract's.
type Client struct {
	f   *Fleet
	idx int

	mu      sync.Mutex
	cur     *drive.Held   // nil while (re)initializing
	mine    []*drive.Held // per request loop: the session that loop sends with (see Policy.SharesSession)
	state   metrics.State
	turns   []loopTurns  // per request loop: its place on the schedule
	calls   atomic.Int64 // tool calls made: {{seq}} and progress tokens
	logical atomic.Int64 // logical calls begun: each names its retries alike (callKey)
	wasLive atomic.Bool  // the client has had a live session: later turns without one are calls not made
}

// Index is the client's index in its group, from 0.
func (c *Client) Index() int { return c.idx }

// SetState moves the client to state s.
func (c *Client) SetState(s metrics.State) {
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

// Initialize opens a new session and makes it the client's current one.
func (c *Client) Initialize(ctx context.Context) (*drive.Held, error) {
	s, _, err := c.f.ep.Initialize(ctx)
	if err != nil {
		return nil, err
	}
	c.f.rec.Inc(metrics.SessionsStarted)
	c.f.env.Served(s)
	c.f.noteProtocol(s.Protocol)
	if lvl := c.f.cfg.LogLevel; lvl != "" && s.Logging && !s.Stateless {
		// So that a server that logs sends log messages (the Go SDK sends none before it).
		if rep, err := s.SetLogLevel(ctx, lvl); err != nil || !rep.OK() {
			c.f.callFailed(rep, err, false)
		}
	}
	h := drive.NewHeld(ctx, s)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.mine {
		if m != nil {
			m.Replaced.Store(true)
		}
	}
	if c.cur != nil { // cannot happen: a session is abandoned before the next starts
		c.cur.Replaced.Store(true)
	}
	c.cur = h
	c.setStateLocked(metrics.StateLive)
	c.f.churn.watch(ctx, c, h) // churn.go: nothing unless the group churns
	return h, nil
}

// Abandon ends the client's belief in h: h's stream ends, and run initializes a new session.
// detected says whether the client classified h dead (as opposed to giving up on it after a
// surfaced failure). allLoops resets every request loop to the next session (the client knows);
// otherwise loops keep h until their own failure (the seed's stale coroutine).
func (c *Client) Abandon(h *drive.Held, detected, allLoops bool) {
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
		if d, dead := c.f.truth.DeadSince(h.S.ID); dead && !d.After(now) {
			c.f.rec.Record(metrics.DetectionDelay, c.idx, now.Sub(d))
			c.countDeath(h)
		} else if !dead && c.f.exactDeaths() {
			c.declaredLive(h) // the server's record has it alive (declared.go)
		}
	}
	c.Settle(h, now)
	h.Cancel()
	c.f.done(h.S)
}

// Settle counts the time the client believed h alive after it had died.
func (c *Client) Settle(h *drive.Held, now time.Time) {
	if !h.Marks.Settled.CompareAndSwap(false, true) {
		return
	}
	if d, dead := c.f.truth.DeadSince(h.S.ID); dead && d.Before(now) {
		c.f.rec.AddFalseHealthy(now.Sub(d))
	}
}

// Account counts a request sent with h's id if the session was already dead: the server had to
// answer it from its session store (a dead status), or it failed in transport after the death.
// A 2xx answer means the session was alive when the request arrived.
func (c *Client) Account(h *drive.Held, sent time.Time, status int, retry bool) {
	c.f.refusal(status)
	if c.f.env.Dead(status) {
		c.f.refused(h.S, sent, c.idx)
	}
	d, dead := c.f.truth.DeadSince(h.S.ID)
	if !dead || status/100 == 2 || (status == 0 && d.After(sent)) {
		return
	}
	c.f.rec.Inc(metrics.DeadSessionRequests)
	if retry {
		c.f.rec.Inc(metrics.RetriesAgainstDead)
	}
	if h.Marks.RanInto.CompareAndSwap(false, true) {
		c.f.rec.Inc(metrics.SessionsDead)
		c.countDeath(h)
	}
}

// countDeath counts h's death once, by how its time was obtained.
func (c *Client) countDeath(h *drive.Held) {
	if !h.Marks.Sourced.CompareAndSwap(false, true) {
		return
	}
	switch c.f.env.DeathSource(h.S) {
	case truth.DeathExact:
		c.f.deaths[0].Add(1)
	case truth.DeathFromTTL:
		c.f.deaths[1].Add(1)
	default:
		c.f.deaths[2].Add(1)
	}
}

// Apply applies n server events of h, read on a stream opened at opened, to client state.
// They are stale when the stream was opened after the session had died: a replay (or a
// reconnect) that the server answered from its log for a dead session, the seed's trap. An
// event sent on a stream opened while the session lived, and read in the instant after its
// death (a replica that drains while it restarts), was not replayed: the client could not
// have known, and MISSION counts only replayed events as stale.
func (c *Client) Apply(h *drive.Held, n int, opened time.Time) {
	if n == 0 {
		return
	}
	c.f.rec.Add(metrics.EventsApplied, int64(n))
	if since, dead := c.f.truth.DeadSince(h.S.ID); dead && !since.After(opened) {
		c.f.rec.Add(metrics.StaleEventsApplied, int64(n))
	}
}

// Probe sends the group's liveness probe on h.
func (c *Client) Probe(h *drive.Held) policy.ProbeResult {
	c.f.rec.Inc(metrics.ProbesSent)
	sent := time.Now()
	var rep *wire.Reply
	var err error
	if c.f.cfg.Probe == "tools/list" {
		rep, err = h.S.ListTools(h.Ctx)
	} else {
		rep, err = h.S.Ping(h.Ctx)
	}
	c.f.rec.Record(metrics.ProbeLatency, c.idx, time.Since(sent))
	r := policy.ProbeResult{Err: err}
	if rep != nil {
		if rep.Status/100 == 2 {
			c.f.env.Served(h.S)
		}
		r.Status = rep.Status
		r.Dead = c.f.env.DeadReply(rep)
		if rep.Status/100 == 2 && rep.RPCError != nil && err == nil {
			r.Err = &wire.StatusError{Status: rep.Status, RPC: rep.RPCError}
		}
	}
	if err != nil && h.Ctx.Err() == nil {
		wire.Count(c.f.rec, err)
	}
	c.Account(h, sent, r.Status, false)
	return r
}

// SessionFor returns the session request loop k sends with, or nil when it should skip.
func (c *Client) SessionFor(k int) *drive.Held {
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

// DropLoopSession makes loop k forget its session; if it was still the client's current one,
// the client gives up on it and re-initializes (the application's reaction to a tool failure).
func (c *Client) DropLoopSession(k int, h *drive.Held) {
	c.mu.Lock()
	c.mine[k] = nil
	c.mu.Unlock()
	c.Abandon(h, false, false)
}

// CallTool sends the group's tool call with args, with a progress token unless the group
// turned them off: a server that reports progress then answers with an SSE reply whose events
// carry ids, which gives the session a cursor.
//
// call names the logical call (callKey): the same on every retry and re-issue of it.
func (c *Client) CallTool(ctx context.Context, s *wire.Session, args any, call string) (*wire.Reply, error) {
	return s.CallToolAs(ctx, c.f.tool(), args, c.ProgressToken(), call)
}

// ProgressToken numbers the client's next tool call ({{seq}}) and returns its progress token,
// "" when the group turned them off.
func (c *Client) ProgressToken() string {
	seq := c.calls.Add(1)
	if c.f.cfg.NoProgressTokens {
		return ""
	}
	return fmt.Sprintf("mcpchaos-%s-%d-%d", c.f.cfg.Name, c.idx, seq)
}

// Adopt makes h, a session a client library opened, the client's current one: counted as
// started, and the client live on it.
func (c *Client) Adopt(h *drive.Held) {
	c.f.rec.Inc(metrics.SessionsStarted)
	c.f.env.Served(h.S)
	c.f.noteProtocol(h.S.Protocol)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = h
	c.setStateLocked(metrics.StateLive)
}

// Current is the client's current session (nil while it re-initializes) and whether the
// client is live on it.
func (c *Client) Current() (*drive.Held, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur, c.state == metrics.StateLive
}

// Forget lets go of h if it is still the current session, counting nothing: at the end of the
// run its driver settled and ended it, so finish must not DELETE it a second time.
func (c *Client) Forget(h *drive.Held) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == h {
		c.cur = nil
	}
}

// NotMade counts a turn of the client that passed without a live session (Fleet.notMade).
func (c *Client) NotMade(ctx context.Context) { c.f.notMade(ctx, c) }

// NoteAnswered marks, on the call's turn, that the call got its result at at.
func (c *Client) NoteAnswered(ctx context.Context, at time.Time) { noteAnswered(ctx, at) }

// Arguments are the arguments of the client's next call (Fleet.arguments).
func (c *Client) Arguments(ctx context.Context, list func(context.Context) (json.RawMessage, error)) (any, error) {
	return c.f.arguments(ctx, c, list)
}

// CallKey names a new logical call of the client, "GROUP/CLIENT/N": what a server counting
// executions per call (the reference server) groups its runs by.
func (c *Client) CallKey() string {
	return fmt.Sprintf("%s/%d/%d", c.f.cfg.Name, c.idx, c.logical.Add(1))
}

// Answered counts a tool call that got a result: a success, or a tool error (isError), which is
// the tool's own answer and never a session failure.
func (c *Client) Answered(ctx context.Context, rep *wire.Reply, sent time.Time) {
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

func (c *Client) DeadNow(h *drive.Held) bool {
	_, dead := c.f.truth.DeadSince(h.S.ID)
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
	c.Settle(h, end)
	if !c.DeadNow(h) {
		if status, err := h.S.Delete(ctx); err == nil && status/100 == 2 {
			c.f.rec.Inc(metrics.SessionsClosed)
		}
	}
	c.f.done(h.S)
}
