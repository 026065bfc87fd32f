package policy

// Probe is the seed's decision rule, exactly: a successful replay does not confirm liveness;
// only a probe that the server must answer from its session store does.
//
//	replay 200 + probe 2xx         → live: apply the replayed events (Resume)
//	replay 200 + probe dead        → dead: quarantine the events, drop cursor and id, re-initialize
//	replay dead                    → dead at the transport layer: same teardown, no probe
//	replay other + probe 2xx       → cursor refused, session live: resynchronise, keep the session
//	replay other + probe dead      → dead: teardown
//	anything else                  → ambiguous: apply nothing, report, try again later
//
// A dead status on any session-scoped request is a session death, never a tool failure: no
// retries against it. Other failures are retried Retries times, then surfaced. Every request
// loop uses the client's current session.
type Probe struct{ Retries int }

func (Probe) Name() string { return "probe" }

func (Probe) AfterReplay(r Replay, probe func() ProbeResult) ReplayDecision {
	if r.Dead {
		return Teardown
	}
	p := probe()
	switch {
	case p.Dead:
		return Teardown
	case !p.Live():
		return Ambiguous
	case r.Status == 200:
		return Resume
	default:
		return Resync
	}
}

func (p Probe) AfterFailure(f Failure) Action {
	switch {
	case f.Dead:
		return SessionDead
	case f.Attempt <= p.Retries:
		return Retry
	default:
		return SurfaceFailure
	}
}

func (Probe) SharesSession() bool { return true }
