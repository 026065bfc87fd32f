package fleet

import (
	"context"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// statelessDriver runs clients against a stateless server (the 2026-07-28 revision): the wire
// session's hold (initialize returns a request context; there is no stream to hold) and a
// tick of its own.
type statelessDriver struct{}

func (statelessDriver) hold(ctx context.Context, c *Client, wg *sync.WaitGroup) {
	wireDriver{}.hold(ctx, c, wg)
}

func (statelessDriver) tick(ctx context.Context, c *Client, k int) { c.tickStateless(ctx, k) }

func (statelessDriver) notObservable() []string { return SessionOnlyMetrics() }

// tickStateless is a request loop's turn against a stateless server. There is no session to
// lose, so the seed's scenarios do not apply; what does is the revision's own rule: a request
// whose response a fault cuts is lost, and the client re-issues it with a new request id.
// Both policies follow that rule (up to the group's retries); what is measured is how many
// were lost, re-issued, and how long the application waited for their results.
func (c *Client) tickStateless(ctx context.Context, k int) {
	h := c.sessionFor(k)
	if h == nil {
		c.f.notMade(ctx, c) // reconnecting or re-initializing: the turn passes without a call
		return
	}
	cfg := &c.f.cfg
	args, err := c.f.arguments(ctx, c, c.f.listTools(h.s))
	if err != nil {
		if ctx.Err() == nil {
			c.f.argsFailed(err)
		}
		return
	}
	var first time.Time
	lost := false
	call := c.callKey()
	for attempt := 1; ; attempt++ {
		sent := time.Now()
		if attempt == 1 {
			first = sent
		}
		if lost {
			c.f.rec.Inc(metrics.RequestsReissued)
		}
		rep, err := c.callTool(ctx, h.s, args, call)
		if ctx.Err() != nil {
			return
		}
		if err == nil && rep.OK() {
			c.answered(ctx, rep, sent)
			if lost {
				c.f.rec.Record(metrics.RecoveryLatency, c.idx, time.Since(first))
			}
			return
		}
		c.f.callFailed(rep, err, false)
		// Sent and then cut (reset, timeout, a stream that ended before its response): lost in
		// flight. A refused connection never carried the request.
		inFlight := err != nil && rep == nil && wire.Kind(err) != metrics.ErrConnect || err != nil && rep != nil && rep.Status/100 == 2
		if inFlight {
			c.f.rec.Inc(metrics.RequestsLost)
			lost = true
		}
		if err == nil || attempt > reissues(c.f.policy) {
			c.f.surfaced(rep, err, false)
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
		"sessions_dead", "sessions_dead_detected", "misattributed_errors", "dead_session_requests",
		"retries_against_dead", "stale_events_applied", "events_quarantined", "events_applied",
		"reinit_collisions", "resyncs", "retry_amplification", "false_healthy_seconds",
		"probe_latency", "reconnect_latency", "detection_delay"}
}

// Name is the group's name.
func (f *Fleet) Name() string { return f.cfg.Name }

// NotObservable lists the metrics this group's numbers cannot speak for: the session metrics
// against a stateless server, the SDK's internals for a gosdk group.
func (f *Fleet) NotObservable() []string { return f.drv.notObservable() }

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
