package policy

// Naive is the client the seed describes, modelled faithfully: "if SSE opened, we're back".
//
// A replay answered 200 means the session is alive and its events are applied. A replay
// answered with a dead status is a clean teardown. Any other replay status is treated as a
// lost cursor: reconnect without one. A failed tool call is retried Retries times whatever
// the status, then surfaced to the application as a tool failure, after which the application
// re-initializes. Each request loop keeps the session it started with until its own surfaced
// failure, so a second loop goes on sending the old session id after the first has
// re-initialized: the seed's collision.
//
// Which cursor a reconnect carries is the stream's, not the policy's (package
// fleet/wiredriver; both policies alike): the GET stream's own cursor is kept across
// reconnects, a POST reply's is borrowed once. The real libraries keep less (docs/real-servers.md: the TypeScript and Go
// SDKs drop the cursor after a replay that brought no id, and borrow none).
type Naive struct{ Retries int }

func (Naive) Name() string { return "naive" }

func (Naive) AfterReplay(r Replay, _ func() ProbeResult) ReplayDecision {
	switch {
	case r.Status == 200:
		return Resume
	case r.Dead:
		return Teardown
	default:
		return Resync
	}
}

func (p Naive) AfterFailure(f Failure) Action {
	if f.Attempt <= p.Retries {
		return Retry
	}
	return SurfaceFailure
}

func (Naive) SharesSession() bool { return false }
