package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/refserver"
	"github.com/mcpchaos/mcpchaos/results"
)

// The session-leak check of a churn workload against the reference server: once the session
// TTL has passed since the clients last churned, the sessions the server holds must come back
// to the sessions the clients still hold. Abandoned sessions (no DELETE) can only be reclaimed
// by the server's TTL; a server that never reclaims them (refserver's leak mode, or a real one
// without idle expiry) keeps them, and the check fails the gate (exit 99), naming the leak.
//
// It reads the reference server's sessions-held gauge directly (the number its /metrics
// exposes as mcpchaos_refserver_sessions_held). It is the built-in form of a steady-state
// probe on that metric; docs/session-leaks.md shows the same check against a staging
// server's own gauge.

// leakPoll is how often the check reads the gauge once it may judge: the reaper runs on its
// own ticker, which a busy machine may delay, so the check waits for it rather than taking
// one sample.
const leakPoll = 50 * time.Millisecond

// leakCheck is the check's plan: when it may first judge (the TTL has passed since the churn
// ended, plus the reaper's interval), and the last moment it may still read (before the
// clients end their sessions at the end of the run).
type leakCheck struct {
	from, until time.Duration
	ttl         time.Duration
	runEnd      time.Duration // the run's planned duration
}

// planLeakCheck says whether the run gets the check, and when: a built-in target and a group
// that churns. ok false: no check.
func (r *runner) planLeakCheck() (leakCheck, bool) {
	b := r.w.Target.Builtin
	if b == nil || b.SessionTTL <= 0 {
		return leakCheck{}, false
	}
	var churnEnd time.Duration
	churns := false
	for _, g := range r.w.Groups {
		if g.Churn == nil {
			continue
		}
		churns = true
		for _, p := range r.w.Phases {
			if g.Churn.During == nil || slices.Contains(g.Churn.During, p.Name) {
				churnEnd = max(churnEnd, p.End())
			}
		}
	}
	if !churns {
		return leakCheck{}, false
	}
	// A session abandoned at the churn's end dies a TTL after its last request, which may
	// come up to a request timeout later; the reaper then needs up to a second.
	from := churnEnd + b.SessionTTL + time.Second
	until := r.w.Duration - min(time.Second, r.w.Duration/20)
	return leakCheck{from: from, until: until, ttl: b.SessionTTL, runEnd: r.w.Duration}, true
}

// runLeakCheck judges the check during the run and records it for the export. It returns when
// it has judged, or when ctx ends.
func (r *runner) runLeakCheck(ctx context.Context, start time.Time, lc leakCheck) {
	out := judgeLeak(ctx, start, lc, r.inst.Stats, r.clientsHolding)
	r.leakMu.Lock()
	r.leak = out
	r.leakMu.Unlock()
}

// judgeLeak is the check's timing and verdict: it waits until lc.from after start, then reads
// server (the reference server's session counts) and clients (the sessions the clients hold)
// every leakPoll until they agree or lc.until has passed. Apart from the runner so that its
// windows are tested on a fake clock (leakcheck_time_test.go).
func judgeLeak(ctx context.Context, start time.Time, lc leakCheck, server func() refserver.Stats, clients func() int64) *results.SessionLeak {
	out := &results.SessionLeak{TTLSeconds: lc.ttl.Seconds()}
	if lc.from >= lc.until {
		out.Verdict = fmt.Sprintf("not judged: the run ends %s after the clients last churned, before the session TTL (%s) and the reaper could reclaim what they abandoned; make the last phase last ttl+2s or more",
			fmtSeconds(lc.runEnd-(lc.from-lc.ttl-time.Second)), lc.ttl)
		return out
	}
	if !sleep.For(ctx, time.Until(start.Add(lc.from))) {
		out.Verdict = "not judged: the run ended before the TTL had passed"
		return out
	}
	for {
		held, live := server().SessionsHeld, clients()
		out.Judged, out.Held, out.Live, out.AtSeconds = true, held, live, roundS(time.Since(start))
		if held <= live {
			out.Pass = true
			out.Verdict = fmt.Sprintf("passed: the server holds %d sessions, the clients %d, once the TTL had passed", held, live)
			break
		}
		if time.Until(start.Add(lc.until)) <= 0 || !sleep.For(ctx, leakPoll) {
			break
		}
	}
	st := server()
	out.Opened, out.Deleted, out.Expired, out.Refused = st.SessionsCreated, st.SessionsDeleted, st.SessionsExpired, st.SessionsRefused
	if out.Pass {
		return out
	}
	if ctx.Err() != nil && out.Held > out.Live && time.Until(start.Add(lc.until)) > 0 {
		out.Judged = false
		out.Verdict = "not judged: the run ended while the server still held more sessions than the clients"
		return out
	}
	out.Verdict = fmt.Sprintf("LEAK: the server still holds %d sessions a TTL (%s) after the churn, while the clients hold %d: %d never reclaimed (opened %d, deleted %d, expired %d); a server that does not expire abandoned sessions grows until it runs out of memory",
		out.Held, lc.ttl, out.Live, out.Held-out.Live, st.SessionsCreated, st.SessionsDeleted, st.SessionsExpired)
	return out
}

// clientsHolding is how many of the run's clients hold a session now (live, or reconnecting
// to it).
func (r *runner) clientsHolding() int64 {
	var n int64
	for _, f := range r.fleets {
		cs := f.Census()
		n += int64(cs.Live + cs.Reconnecting)
	}
	return n
}

func fmtSeconds(d time.Duration) string { return d.Round(time.Millisecond).String() }
