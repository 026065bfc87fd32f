package refserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// GetValidation says whether a GET carrying Last-Event-ID is checked against
// the session store before the event log is consulted.
type GetValidation string

const (
	// Permissive answers a replay from the event log alone: a cursor that is
	// still in the log is replayed with 200 even when its session is dead.
	Permissive GetValidation = "permissive"
	// Strict checks the session first: a dead session gets DeadStatus.
	Strict GetValidation = "strict"
)

// PostResponse values: how POSTed requests are answered.
const (
	PostSSE  = "sse"
	PostJSON = "json"
)

// The session TTL modes (Config.TTLMode).
const (
	TTLSliding  = "sliding"
	TTLAbsolute = "absolute"
)

// Config sets the server's regime. The zero value is valid: see WithDefaults.
type Config struct {
	// SessionTTL is the sliding idle TTL of a session. It is refreshed only by
	// session-scoped POSTs (any JSON-RPC message POSTed with a live
	// Mcp-Session-Id, ping included), never by GETs or DELETE.
	// 0 means sessions never expire.
	SessionTTL time.Duration
	// TTLMode is TTLSliding (the default: SessionTTL runs from the session's last
	// session-scoped POST) or TTLAbsolute (SessionTTL runs from initialize, however active the
	// session is, as gateways that cap a session's lifetime do).
	TTLMode string
	// Era is which protocol generations the server speaks: EraBoth (the default), EraSession
	// or EraStateless (era.go). A Cluster restarts a replica into another (RestartAs).
	Era string
	// Retention is how long an event stays in the event log, counted from its
	// emission and independent of the session's life: events outlive their
	// session when Retention > SessionTTL. 0 keeps events until
	// RetentionEvents evicts them (for a dead session: until Close).
	Retention time.Duration
	// RetentionEvents caps the events kept per session log, oldest evicted
	// first. 0 means 1024.
	RetentionEvents int
	// GetValidation is Permissive (the default) or Strict.
	GetValidation GetValidation
	// DeadStatus answers any request on a dead or unknown session. 0 means 404.
	DeadStatus int
	// DeadBody is the body sent with DeadStatus. "" means
	// `{"error":"session expired"}`. Sent as application/json if it is valid
	// JSON, else as text/plain.
	DeadBody string
	// UnknownCursorStatus answers a GET whose Last-Event-ID is not in the log
	// while its session is live. 0 means 400; -1 means 200 with nothing
	// replayed.
	UnknownCursorStatus int
	// NotifyInterval: every interval each live session gets one
	// notifications/message on its GET stream (logged, and pushed to the open
	// stream if any). 0 means off.
	NotifyInterval time.Duration
	// Keepalive: every interval each open GET stream gets a `: keepalive`
	// comment. 0 (the default) means off, which is what exposes streams to
	// load-balancer idle timeouts.
	Keepalive time.Duration
	// Retry, if > 0, is sent as `retry: <ms>` with the priming event of every
	// SSE stream.
	Retry time.Duration
	// PostResponse is PostSSE (the default) or PostJSON.
	PostResponse string
	// SlowSteps is how many notifications/progress the slow tool sends before
	// its result. 0 means 3; negative means none.
	SlowSteps int
	// SlowStep is the pause before each of the slow tool's steps. 0 means 50ms.
	SlowStep time.Duration
	// MaxSessions caps the sessions the server holds (sessions_held: records not yet
	// reclaimed, dead or alive): an initialize beyond it is answered 503, as the Python SDK
	// answers above 10,000. 0 means no cap. A Cluster's replicas cap each their own.
	MaxSessions int
	// Leak makes the server never reclaim a session: a session still dies (by TTL or DELETE,
	// and is answered as dead), but its record and its event log stay held, as in a server
	// that checks expiry on lookup and has no sweeper. Sessions held then only grow
	// (leak.go).
	Leak bool
	// Now is the clock. nil means time.Now.
	Now func() time.Time
}

const (
	defaultRetentionEvents = 1024
	defaultDeadStatus      = 404
	defaultDeadBody        = `{"error":"session expired"}`
	defaultUnknownCursor   = 400
	defaultSlowSteps       = 3
	defaultSlowStep        = 50 * time.Millisecond
)

// WithDefaults returns c with every zero field set to its documented default.
func (c Config) WithDefaults() Config {
	if c.RetentionEvents == 0 {
		c.RetentionEvents = defaultRetentionEvents
	}
	if c.GetValidation == "" {
		c.GetValidation = Permissive
	}
	if c.DeadStatus == 0 {
		c.DeadStatus = defaultDeadStatus
	}
	if c.DeadBody == "" {
		c.DeadBody = defaultDeadBody
	}
	if c.UnknownCursorStatus == 0 {
		c.UnknownCursorStatus = defaultUnknownCursor
	}
	if c.PostResponse == "" {
		c.PostResponse = PostSSE
	}
	if c.SlowSteps == 0 {
		c.SlowSteps = defaultSlowSteps
	}
	if c.SlowSteps < 0 {
		c.SlowSteps = 0
	}
	if c.SlowStep == 0 {
		c.SlowStep = defaultSlowStep
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports every setting of c (after WithDefaults) that the server
// cannot honour.
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs []error
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"session TTL", c.SessionTTL}, {"retention", c.Retention}, {"notify interval", c.NotifyInterval},
		{"keepalive", c.Keepalive}, {"retry", c.Retry}, {"slow step", c.SlowStep},
	} {
		if f.d < 0 {
			errs = append(errs, fmt.Errorf("%s %v is negative", f.name, f.d))
		}
	}
	if c.RetentionEvents < 0 {
		errs = append(errs, fmt.Errorf("retention events %d is negative", c.RetentionEvents))
	}
	if c.MaxSessions < 0 {
		errs = append(errs, fmt.Errorf("max sessions %d is negative (0: no cap)", c.MaxSessions))
	}
	if c.GetValidation != Permissive && c.GetValidation != Strict {
		errs = append(errs, fmt.Errorf("get validation %q: want %q or %q", c.GetValidation, Permissive, Strict))
	}
	if err := validEra(c.Era); err != nil {
		errs = append(errs, err)
	}
	if c.TTLMode != "" && c.TTLMode != TTLSliding && c.TTLMode != TTLAbsolute {
		errs = append(errs, fmt.Errorf("ttl mode %q: want %q or %q", c.TTLMode, TTLSliding, TTLAbsolute))
	}
	if c.PostResponse != PostSSE && c.PostResponse != PostJSON {
		errs = append(errs, fmt.Errorf("post response %q: want %q or %q", c.PostResponse, PostSSE, PostJSON))
	}
	if c.DeadStatus < 200 || c.DeadStatus > 599 {
		errs = append(errs, fmt.Errorf("dead status %d is not an HTTP status", c.DeadStatus))
	}
	if c.UnknownCursorStatus != -1 && (c.UnknownCursorStatus < 200 || c.UnknownCursorStatus > 599) {
		errs = append(errs, fmt.Errorf("unknown cursor status %d: want an HTTP status or -1", c.UnknownCursorStatus))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("target config: %w", err)
	}
	return nil
}

// deadContentType is the content type DeadBody is sent with.
func (c Config) deadContentType() string {
	if json.Valid([]byte(c.DeadBody)) {
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}

// reapInterval is how often the reaper frees dead sessions and expired
// events, and so how late a Strict server closes the stream of a session
// that died by TTL. Liveness itself never waits for it.
func (c Config) reapInterval() time.Duration {
	base := time.Duration(0)
	for _, d := range []time.Duration{c.SessionTTL, c.Retention} {
		if d > 0 && (base == 0 || d < base) {
			base = d
		}
	}
	if base == 0 {
		return time.Second
	}
	return min(max(base/4, 5*time.Millisecond), time.Second)
}
