package fleet

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/mcpwire"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// reading is a held stream on its way from one goroutine to the next.
type reading struct {
	h        *held
	st       *wire.Stream
	cursor   string     // the GET stream's own cursor, or one borrowed from a POST reply
	borrowed string     // the POST reply cursor last replayed from (replayed once, not in a loop)
	j        *judgement // set while a replay answered 200 awaits its verdict
	opened   time.Time  // when st's response came, taken by the goroutine that got it
}

// readOn hands r to a fresh goroutine (see Client.run for why).
func (c *Client) readOn(ctx context.Context, wg *sync.WaitGroup, r *reading) {
	wg.Add(1)
	go c.read(ctx, wg, r)
}

// read reads the session's stream, applying server events, and handles its end: a drop is
// followed by a reconnect with the cursor (a replay) that the policy judges. It ends by handing
// the next stream to a fresh goroutine, or by restarting the client when the session was
// abandoned.
func (c *Client) read(ctx context.Context, wg *sync.WaitGroup, r *reading) {
	defer wg.Done()
	defer guard.Catch(ctx, "stream reader "+c.f.cfg.Name)
	cfg := &c.f.cfg
	h := r.h
	retry := c.consume(h, r.st, &r.cursor, r.j.gate(), r.opened)
	drop := true
	if r.j != nil {
		switch r.j.wait() {
		case policy.Teardown:
			c.f.rec.Add(metrics.EventsQuarantined, int64(r.j.g.late()))
			c.restart(ctx, wg)
			return
		case policy.Resume:
		default: // ambiguous: nothing was applied; replay again from the old cursor
			r.cursor, retry, drop = r.j.before, -1, false
		}
		r.j = nil
	}
	if h.ctx.Err() != nil { // abandoned, or the run is over
		c.restart(ctx, wg)
		return
	}
	if drop { // the stream ended while the client still holds the session
		c.f.rec.Inc(metrics.Drops)
		c.setState(metrics.StateReconnecting)
	}
	r.chooseCursor()
	r.st, r.j = c.reconnect(h, &r.cursor, time.Now(), wire.RetryDelay(retry, cfg.ReconnectDelay, cfg.ReconnectMax))
	r.opened = time.Now()
	if r.st == nil {
		c.restart(ctx, wg)
		return
	}
	c.readOn(ctx, wg, r)
}

// chooseCursor picks the cursor to resume the standalone stream with: its own when it has
// carried ids; otherwise the last id the session read on a POST reply, once (2025-11-25:
// GET + Last-Event-ID resumes a stream whether it began as a POST or a GET). A borrowed
// cursor whose replay brought no newer id is not replayed again: the next reconnect is a
// plain GET.
func (r *reading) chooseCursor() {
	if r.cursor != "" && r.cursor == r.borrowed {
		r.cursor = "" // the borrowed replay is done
		return
	}
	if r.cursor != "" {
		return
	}
	if pc := r.h.s.Cursor(); pc != "" && pc != r.borrowed {
		r.cursor, r.borrowed = pc, pc
	}
}

// openFirst opens the session's first GET stream. nil means there is none to hold.
//
// A session without an id (a server that keeps no sessions: ids are optional) has no stream
// of its own to hold: a GET without an id is a stream the server cannot tie to anyone, and
// real servers answer it in ways of their own (mcp-go's stateless mode holds each open, then
// ends one when the next comes: a storm of reconnects without any fault).
func (c *Client) openFirst(h *held) *wire.Stream {
	if h.s.ID == "" {
		return nil
	}
	b := newBackoff(c.f.cfg.ReconnectDelay, c.f.cfg.ReconnectMax)
	for h.ctx.Err() == nil {
		sent := time.Now()
		st, err := h.s.OpenStream(h.ctx, "")
		if err == nil {
			c.f.refusal(st.Status)
		}
		switch {
		case err != nil:
			if h.ctx.Err() == nil {
				wire.Count(c.f.rec, err)
			}
		case st.Status == http.StatusOK:
			c.f.servedStream(h.s)
			return st
		case st.Status == http.StatusMethodNotAllowed:
			if c.f.streamsServed.Load() > 0 {
				// It served streams before: it now speaks only the stateless era (a rolling
				// upgrade), which has no GET stream, not a server that never offered one.
				c.f.rec.Inc(metrics.WrongEraRequests)
			}
			return nil // the server offers no standalone stream
		case c.f.dead(st.Status):
			c.account(h, sent, st.Status, false)
			c.abandon(h, true, true)
			return nil
		default:
			c.f.rec.Error(metrics.ErrStatus)
		}
		sleep.For(h.ctx, b.next())
	}
	return nil
}

// consume reads st, whose response came at opened, until it ends, tracking the cursor. Events go
// to pending while a verdict is awaited (pending != nil), else they are applied. It returns the
// server's last retry value.
func (c *Client) consume(h *held, st *wire.Stream, cursor *string, pending *verdictGate, opened time.Time) int64 {
	defer st.Close()
	// Not time.Now() here: consume runs in a fresh goroutine (readOn), which a loaded machine
	// starts late, and a stream opened while its session lived, counted as opened after the
	// death that came meanwhile, had its events counted stale (probe 1 in TestRollingDeployFast).
	if pending != nil {
		opened = pending.opened
	}
	c.f.streamState(h.s, true)
	defer c.f.streamState(h.s, false)
	for ev, err := range st.Events(c.f.ep.MaxEvent) {
		if err != nil {
			if h.ctx.Err() == nil {
				err = st.Classify(err, c.f.ep.MaxEvent)
				wire.Count(c.f.rec, err)
				if wire.Kind(err) == metrics.ErrTooLarge { // what the server sent, for the problem line
					c.f.sample(err.Error())
				}
			}
			break
		}
		*cursor = ev.Cursor
		h.s.NoteCursor(ev.Cursor)
		if ev.Data == "" {
			continue // priming event: it only moves the cursor
		}
		if pending == nil || !pending.hold() {
			c.apply(h, 1, opened)
			c.answerEvent(h, ev.Data)
		}
	}
	return st.Retry()
}

// answerEvent answers an event of the GET stream that is a server request (ping, roots/list,
// ...); notifications need no answer, and a message that does not decode is a protocol error.
func (c *Client) answerEvent(h *held, data string) {
	m, err := mcpwire.Decode([]byte(data))
	if err != nil {
		c.f.protocolError(fmt.Errorf("GET stream event: %w", err))
		return
	}
	if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
		h.s.Answer(h.ctx, req)
	}
}

// reconnect sends replays until one is answered in a way the policy can judge. It returns the
// stream to read next (with the judgement of a replay answered 200 still under way), or nil
// when the session was abandoned or the run ended.
func (c *Client) reconnect(h *held, cursor *string, noticed time.Time, delay time.Duration) (*wire.Stream, *judgement) {
	b := newBackoff(delay, max(delay, c.f.cfg.ReconnectMax))
	for sleep.For(h.ctx, b.next()) {
		sent := time.Now()
		st, err := h.s.OpenStream(h.ctx, *cursor)
		if err != nil {
			if h.ctx.Err() == nil {
				wire.Count(c.f.rec, err)
			}
			continue
		}
		c.f.rec.Record(metrics.ReconnectLatency, c.idx, time.Since(noticed))
		c.streamAnswered(h, st.Status, *cursor != "")
		if st.Status == http.StatusConflict {
			c.f.rec.Error(metrics.ErrStatus) // the server still holds our old stream
			continue
		}
		r := policy.Replay{Status: st.Status, Dead: c.f.dead(st.Status)}
		c.f.refusal(st.Status)
		if r.Dead {
			c.account(h, sent, st.Status, false)
		}
		if *cursor == "" {
			// No cursor, no replay: a plain reconnect.
			switch {
			case r.Status == http.StatusOK:
				c.f.servedStream(h.s)
				c.setState(metrics.StateLive)
				return st, nil
			case r.Dead:
				c.abandon(h, true, true)
				return nil, nil
			}
			c.f.rec.Error(metrics.ErrStatus)
			continue
		}
		switch {
		case r.Status == http.StatusOK:
			c.f.rec.Inc(metrics.ReplaysOK)
			return st, c.judge(h, st, *cursor)
		case r.Dead:
			c.f.rec.Inc(metrics.ReplaysDead)
		default:
			c.f.rec.Inc(metrics.ReplaysUnknownCursor)
		}
		switch c.f.policy.AfterReplay(r, func() policy.ProbeResult { return c.probe(h) }) {
		case policy.Teardown:
			if r.Dead {
				c.judgeAbandonedResume(h) // a URL target: did the server still have it?
			}
			c.abandon(h, true, true)
			return nil, nil
		case policy.Resync:
			c.f.rec.Inc(metrics.Resyncs)
			*cursor = ""
		default:
			c.f.rec.Error(metrics.ErrStatus)
		}
	}
	return nil, nil
}

// judgement is a policy judging a replay answered 200 while its events arrive: they are held
// back until the verdict, then applied (Resume) or quarantined (Teardown). The probe runs in a
// goroutine of its own for that short while, because the stream may send nothing more to wake
// its reader.
type judgement struct {
	g      verdictGate
	before string // the cursor the replay was asked from
	done   chan policy.ReplayDecision
}

func (c *Client) judge(h *held, st *wire.Stream, cursor string) *judgement {
	j := &judgement{before: cursor, done: make(chan policy.ReplayDecision, 1)}
	j.g.opened = time.Now()
	go func() {
		defer func() {
			if v := recover(); v != nil {
				guard.Recovered(h.ctx, "replay verdict "+c.f.cfg.Name, v)
				j.done <- policy.Teardown // its waiter must not wait forever
			}
		}()
		var pr policy.ProbeResult
		v := c.f.policy.AfterReplay(policy.Replay{Status: http.StatusOK}, func() policy.ProbeResult {
			pr = c.probe(h)
			return pr
		})
		switch n := j.g.decide(v); v {
		case policy.Resume:
			c.apply(h, n, j.g.opened)
			c.setState(metrics.StateLive)
		case policy.Teardown:
			c.f.rec.Add(metrics.EventsQuarantined, int64(n))
			c.abandon(h, true, true) // ends the stream
		default:
			if pr.Status != 0 {
				// A probe answered with a status no rule knows; one that failed in transport
				// was counted by its kind when it failed (probe).
				c.f.rec.Error(metrics.ErrStatus)
			}
			st.Close() // apply nothing
		}
		j.done <- v
	}()
	return j
}

func (j *judgement) gate() *verdictGate {
	if j == nil {
		return nil
	}
	return &j.g
}

// wait returns the verdict; called once the stream has ended.
func (j *judgement) wait() policy.ReplayDecision { return <-j.done }

// verdictGate holds back events until a verdict.
type verdictGate struct {
	mu      sync.Mutex
	decided bool
	v       policy.ReplayDecision
	pending int       // held back before the verdict
	after   int       // arrived after a Teardown, before the stream closed
	opened  time.Time // when the replay's stream was answered (see Client.apply)
}

// hold reports whether the event must be held back (and counts it), or applied now.
func (g *verdictGate) hold() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case !g.decided:
		g.pending++
		return true
	case g.v == policy.Resume:
		return false
	default:
		g.after++
		return true
	}
}

// decide records the verdict and returns how many events were held back.
func (g *verdictGate) decide(v policy.ReplayDecision) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.decided, g.v = true, v
	return g.pending
}

func (g *verdictGate) late() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.after
}
