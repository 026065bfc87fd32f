package wiredriver

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/clients/fleet/drive"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/mcpwire"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// reading is a held stream on its way from one goroutine to the next.
type reading struct {
	h        *drive.Held
	st       *wire.Stream
	cursor   string     // the GET stream's own cursor, or one borrowed from a POST reply
	borrowed string     // the POST reply cursor last replayed from (replayed once, not in a loop)
	j        *judgement // set while a replay answered 200 awaits its verdict
	opened   time.Time  // when st's response came, taken by the goroutine that got it
}

// readOn hands r to a fresh goroutine (see Driver.Hold for why).
func (c client) readOn(ctx context.Context, wg *sync.WaitGroup, r *reading) {
	wg.Add(1)
	go c.read(ctx, wg, r)
}

// read reads the session's stream, applying server events, and handles its end: a drop is
// followed by a reconnect with the cursor (a replay) that the policy judges. It ends by handing
// the next stream to a fresh goroutine, or by restarting the client when the session was
// abandoned.
func (c client) read(ctx context.Context, wg *sync.WaitGroup, r *reading) {
	defer wg.Done()
	defer guard.Catch(ctx, "stream reader "+c.e.Name)
	cfg := c.e
	h := r.h
	retry := c.consume(h, r.st, &r.cursor, r.j.gate(), r.opened)
	drop := true
	if r.j != nil {
		switch r.j.wait() {
		case policy.Teardown:
			c.e.Rec.Add(metrics.EventsQuarantined, int64(r.j.g.late()))
			c.Restart(ctx, wg)
			return
		case policy.Resume:
		default: // ambiguous: nothing was applied; replay again from the old cursor
			r.cursor, retry, drop = r.j.before, -1, false
		}
		r.j = nil
	}
	if h.Ctx.Err() != nil { // abandoned, or the run is over
		c.Restart(ctx, wg)
		return
	}
	if drop { // the stream ended while the client still holds the session
		c.e.Rec.Inc(metrics.Drops)
		c.SetState(metrics.StateReconnecting)
	}
	r.chooseCursor()
	r.st, r.j = c.reconnect(h, &r.cursor, time.Now(), wire.RetryDelay(retry, cfg.ReconnectDelay, cfg.ReconnectMax))
	r.opened = time.Now()
	if r.st == nil {
		c.Restart(ctx, wg)
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
	if pc := r.h.S.Cursor(); pc != "" && pc != r.borrowed {
		r.cursor, r.borrowed = pc, pc
	}
}

// openFirst opens the session's first GET stream. nil means there is none to hold.
//
// A session without an id (a server that keeps no sessions: ids are optional) has no stream
// of its own to hold: a GET without an id is a stream the server cannot tie to anyone, and
// real servers answer it in ways of their own (mcp-go's stateless mode holds each open, then
// ends one when the next comes: a storm of reconnects without any fault).
func (c client) openFirst(h *drive.Held) *wire.Stream {
	if h.S.ID == "" {
		return nil
	}
	b := drive.NewBackoff(c.e.ReconnectDelay, c.e.ReconnectMax)
	for h.Ctx.Err() == nil {
		sent := time.Now()
		st, err := h.S.OpenStream(h.Ctx, "")
		if err == nil {
			c.e.Books.Refusal(st.Status)
		}
		switch {
		case err != nil:
			if h.Ctx.Err() == nil {
				wire.Count(c.e.Rec, err)
			}
		case st.Status == http.StatusOK:
			c.e.ServedStream(h.S)
			return st
		case st.Status == http.StatusMethodNotAllowed:
			if c.e.StreamsServed() > 0 {
				// It served streams before: it now speaks only the stateless era (a rolling
				// upgrade), which has no GET stream, not a server that never offered one.
				c.e.Rec.Inc(metrics.WrongEraRequests)
			}
			return nil // the server offers no standalone stream
		case c.e.Dead(st.Status):
			c.Account(h, sent, st.Status, false)
			c.Abandon(h, true, true)
			return nil
		default:
			c.e.Rec.Error(metrics.ErrStatus)
		}
		sleep.For(h.Ctx, b.Next())
	}
	return nil
}

// consume reads st, whose response came at opened, until it ends, tracking the cursor. Events go
// to pending while a verdict is awaited (pending != nil), else they are applied. It returns the
// server's last retry value.
func (c client) consume(h *drive.Held, st *wire.Stream, cursor *string, pending *verdictGate, opened time.Time) int64 {
	defer st.Close()
	// Not time.Now() here: consume runs in a fresh goroutine (readOn), which a loaded machine
	// starts late, and a stream opened while its session lived, counted as opened after the
	// death that came meanwhile, had its events counted stale (probe 1 in TestRollingDeployFast).
	if pending != nil {
		opened = pending.opened
	}
	c.e.StreamState(h.S, true)
	defer c.e.StreamState(h.S, false)
	for ev, err := range st.Events(c.e.EP.MaxEvent) {
		if err != nil {
			if h.Ctx.Err() == nil {
				err = st.Classify(err, c.e.EP.MaxEvent)
				wire.Count(c.e.Rec, err)
				if wire.Kind(err) == metrics.ErrTooLarge { // what the server sent, for the problem line
					c.e.Books.Sample(err.Error())
				}
			}
			break
		}
		*cursor = ev.Cursor
		h.S.NoteCursor(ev.Cursor)
		if ev.Data == "" {
			continue // priming event: it only moves the cursor
		}
		if pending == nil || !pending.hold() {
			c.Apply(h, 1, opened)
			c.answerEvent(h, ev.Data)
		}
	}
	return st.Retry()
}

// answerEvent answers an event of the GET stream that is a server request (ping, roots/list,
// ...); notifications need no answer, and a message that does not decode is a protocol error.
func (c client) answerEvent(h *drive.Held, data string) {
	m, err := mcpwire.Decode([]byte(data))
	if err != nil {
		c.e.Books.ProtocolError(fmt.Errorf("GET stream event: %w", err))
		return
	}
	if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
		h.S.Answer(h.Ctx, req)
	}
}

// reconnect sends replays until one is answered in a way the policy can judge. It returns the
// stream to read next (with the judgement of a replay answered 200 still under way), or nil
// when the session was abandoned or the run ended.
func (c client) reconnect(h *drive.Held, cursor *string, noticed time.Time, delay time.Duration) (*wire.Stream, *judgement) {
	b := drive.NewBackoff(delay, max(delay, c.e.ReconnectMax))
	for sleep.For(h.Ctx, b.Next()) {
		sent := time.Now()
		st, err := h.S.OpenStream(h.Ctx, *cursor)
		if err != nil {
			if h.Ctx.Err() == nil {
				wire.Count(c.e.Rec, err)
			}
			continue
		}
		c.e.Rec.Record(metrics.ReconnectLatency, c.Index(), time.Since(noticed))
		c.StreamAnswered(h, st.Status, *cursor != "")
		if st.Status == http.StatusConflict {
			c.e.Rec.Error(metrics.ErrStatus) // the server still holds our old stream
			continue
		}
		r := policy.Replay{Status: st.Status, Dead: c.e.Dead(st.Status)}
		c.e.Books.Refusal(st.Status)
		if r.Dead {
			c.Account(h, sent, st.Status, false)
		}
		if *cursor == "" {
			// No cursor, no replay: a plain reconnect.
			switch {
			case r.Status == http.StatusOK:
				c.e.ServedStream(h.S)
				c.SetState(metrics.StateLive)
				return st, nil
			case r.Dead:
				c.Abandon(h, true, true)
				return nil, nil
			}
			c.e.Rec.Error(metrics.ErrStatus)
			continue
		}
		switch {
		case r.Status == http.StatusOK:
			c.e.Rec.Inc(metrics.ReplaysOK)
			return st, c.judge(h, st, *cursor)
		case r.Dead:
			c.e.Rec.Inc(metrics.ReplaysDead)
		default:
			c.e.Rec.Inc(metrics.ReplaysUnknownCursor)
		}
		switch c.e.Policy.AfterReplay(r, func() policy.ProbeResult { return c.Probe(h) }) {
		case policy.Teardown:
			if r.Dead {
				c.JudgeAbandonedResume(h) // a URL target: did the server still have it?
			}
			c.Abandon(h, true, true)
			return nil, nil
		case policy.Resync:
			c.e.Rec.Inc(metrics.Resyncs)
			*cursor = ""
		default:
			c.e.Rec.Error(metrics.ErrStatus)
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

func (c client) judge(h *drive.Held, st *wire.Stream, cursor string) *judgement {
	j := &judgement{before: cursor, done: make(chan policy.ReplayDecision, 1)}
	j.g.opened = time.Now()
	go func() {
		defer func() {
			if v := recover(); v != nil {
				guard.Recovered(h.Ctx, "replay verdict "+c.e.Name, v)
				j.done <- policy.Teardown // its waiter must not wait forever
			}
		}()
		var pr policy.ProbeResult
		v := c.e.Policy.AfterReplay(policy.Replay{Status: http.StatusOK}, func() policy.ProbeResult {
			pr = c.Probe(h)
			return pr
		})
		switch n := j.g.decide(v); v {
		case policy.Resume:
			c.Apply(h, n, j.g.opened)
			c.SetState(metrics.StateLive)
		case policy.Teardown:
			c.e.Rec.Add(metrics.EventsQuarantined, int64(n))
			c.Abandon(h, true, true) // ends the stream
		default:
			if pr.Status != 0 {
				// A probe answered with a status no rule knows; one that failed in transport
				// was counted by its kind when it failed (probe).
				c.e.Rec.Error(metrics.ErrStatus)
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
