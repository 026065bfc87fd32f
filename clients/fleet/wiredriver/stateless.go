package wiredriver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet/drive"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Stateless runs clients against a stateless server (the 2026-07-28 revision): the wire
// session (initialize returns a request context: there is no session), a listen stream held
// per client where the server offers one (listen below), and a tick of its own.
type Stateless struct {
	e *drive.Env

	// What the clients learnt of the server's listen streams, for notObservable.
	listened   atomic.Bool // some listen stream was acknowledged
	numbered   atomic.Bool // some notification carried the server's number
	unnumbered atomic.Bool // some did not
}

// NewStateless is the stateless revision's driver of the group e.
func NewStateless(e *drive.Env) *Stateless { return &Stateless{e: e} }

// Hold makes the client's request context, then holds its listen stream until the run ends.
func (d *Stateless) Hold(ctx context.Context, dc drive.Client, _ *sync.WaitGroup) {
	c := client{dc, d.e}
	drive.ConnectLoop(ctx, c.e, c.Initialize, func(h *drive.Held) bool {
		d.listen(h.Ctx, c, h.S)
		<-h.Ctx.Done()
		return false
	})
}

// Tick is a request loop's turn against a stateless server (tickStateless).
func (d *Stateless) Tick(ctx context.Context, dc drive.Client, k int) {
	client{dc, d.e}.tickStateless(ctx, k)
}

// NotObservable: the session metrics always; the listen figures when no server's listen
// stream was acknowledged; notifications_lost when the server numbered none of its
// notifications (a gap can only be seen in numbers: the reference server's).
func (d *Stateless) NotObservable() []string {
	na := SessionOnlyMetrics()
	switch {
	case !d.listened.Load():
		na = append(na, ListenMetrics()...)
	case !d.numbered.Load() || d.unnumbered.Load():
		na = append(na, "notifications_lost")
	}
	return na
}

// ListenMetrics are the figures of the stateless revision's listen stream.
func ListenMetrics() []string {
	return []string{"listens", "listen_drops", "notifications_received", "notifications_lost"}
}

// listen holds a listen stream (subscriptions/listen) for s until ctx ends, as a client of the
// stateless revision keeps one open for the server's notifications: a stream that ends without
// its completion was cut (listen_drops), and the client listens again after its reconnect
// delay. Nothing is resumed in this revision: what the server sent in between is lost, which
// the server's numbers show (notifications_lost). It returns at once when the server offers
// no listen stream.
func (d *Stateless) listen(ctx context.Context, c client, s *wire.Session) {
	backoff := drive.NewBackoff(c.e.ReconnectDelay, c.e.ReconnectMax)
	var last uint64 // the number of the last notification this client read
	for ctx.Err() == nil {
		l, err := s.Listen(ctx)
		switch {
		case errors.Is(err, wire.ErrListenNotOffered):
			if !d.listened.Load() {
				return // the server holds no listen streams: nothing to hold
			}
			fallthrough // it did a moment ago: a fault's answer, or a server that changed
		case err != nil:
			if ctx.Err() == nil {
				c.e.Books.Failed(err)
			}
			sleep.For(ctx, backoff.Next())
			continue
		}
		backoff.Reset()
		d.listened.Store(true)
		c.e.Rec.Inc(metrics.Listens)
		end := l.Read(ctx, func(n wire.Notification) {
			c.e.Rec.Inc(metrics.NotificationsReceived)
			if n.Seq == 0 {
				d.unnumbered.Store(true)
				return
			}
			d.numbered.Store(true)
			if last != 0 && n.Seq > last+1 {
				c.e.Rec.Add(metrics.NotificationsLost, int64(n.Seq-last-1))
			}
			last = max(last, n.Seq)
		})
		l.Close()
		if ctx.Err() != nil {
			return // the run is over: the client ended the stream
		}
		if !end.Completed {
			c.e.Rec.Inc(metrics.ListenDrops)
			if end.Err != nil {
				c.e.Books.Failed(end.Err)
			}
		}
		sleep.For(ctx, backoff.Next())
	}
}

// tickStateless is a request loop's turn against a stateless server. There is no session to
// lose, so the seed's scenarios do not apply; what does is the revision's own rule: a request
// whose response a fault cuts is lost, and the client re-issues it with a new request id.
// Both policies follow that rule (up to the group's retries); what is measured is how many
// were lost, re-issued, and how long the application waited for their results.
func (c client) tickStateless(ctx context.Context, k int) {
	h := c.SessionFor(k)
	if h == nil {
		c.NotMade(ctx) // reconnecting or re-initializing: the turn passes without a call
		return
	}
	cfg := c.e
	args, err := c.Arguments(ctx, drive.ListTools(c.e.Books, h.S))
	if err != nil {
		if ctx.Err() == nil {
			c.e.Books.ArgsFailed(err)
		}
		return
	}
	var first time.Time
	lost := false
	call := c.CallKey()
	for attempt := 1; ; attempt++ {
		sent := time.Now()
		if attempt == 1 {
			first = sent
		}
		if lost {
			c.e.Rec.Inc(metrics.RequestsReissued)
		}
		rep, err := c.CallTool(ctx, h.S, args, call)
		if ctx.Err() != nil {
			return
		}
		if err == nil && rep.OK() {
			c.Answered(ctx, rep, sent)
			if lost {
				c.e.Rec.Record(metrics.RecoveryLatency, c.Index(), time.Since(first))
			}
			return
		}
		c.e.Books.CallFailed(rep, err, false)
		// Sent and then cut (reset, timeout, a stream that ended before its response): lost in
		// flight. A refused connection never carried the request.
		inFlight := err != nil && rep == nil && wire.Kind(err) != metrics.ErrConnect || err != nil && rep != nil && rep.Status/100 == 2
		if inFlight {
			c.e.Rec.Inc(metrics.RequestsLost)
			lost = true
		}
		if err == nil || attempt > reissues(c.e.Policy) {
			c.e.Books.Surfaced(rep, err, false)
			return
		}
		if !sleep.For(ctx, cfg.RetryBackoff<<min(attempt-1, 6)) {
			return
		}
	}
}

// SessionOnlyMetrics are the metrics that mean nothing without sessions: against a stateless
// server they stay zero because there is nothing to count, not because all was well.
func SessionOnlyMetrics() []string {
	return []string{"sessions_started", "drops", "replays_ok", "replays_dead", "replays_unknown_cursor", "probes_sent",
		"sessions_dead", "sessions_dead_detected", "misattributed_errors", "live_sessions_declared_dead", "dead_session_requests",
		"retries_against_dead", "stale_events_applied", "events_quarantined", "events_applied",
		"reinit_collisions", "resyncs", "retry_amplification", "false_healthy_seconds",
		"probe_latency", "reconnect_latency", "detection_delay", "reconnects_refused", "refusal_duration"}
}

// reissues is how many times a lost request is re-issued: the group's retries.
func reissues(p policy.Policy) int {
	switch p := p.(type) {
	case policy.Naive:
		return p.Retries
	case policy.Probe:
		return p.Retries
	}
	return 3
}
