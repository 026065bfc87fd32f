package drive

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Env is what a group hands its driver: its settings, the endpoint its clients speak to, the
// recorder they count into, the server's truth they are judged by, their policy and the
// group's books; and the judgements every kind makes alike of the server's answers (Dead,
// DeadReply) and tells a learning truth (Served, ServedStream, StreamState).
type Env struct {
	Settings
	EP     *wire.Endpoint
	Rec    *metrics.Recorder
	Truth  truth.Truth
	Policy policy.Policy // nil for a client library's group: the library decides
	Books  Books

	// streamsServed counts GET streams the server answered 200: a 405 after one is a change
	// of era, not a server without streams.
	streamsServed atomic.Int64
}

// Settings are the group's settings a driver reads (fleet's GroupConfig, resolved).
type Settings struct {
	Name    string
	Kind    string // the group's policy name; a client library's picks the library driver
	Clients int
	Tool    string // the tool the group names (Books.Tool: the one it calls)
	// OwnArguments: the group gives its calls' arguments (no tools/list needed for them).
	OwnArguments     bool
	NoProgressTokens bool
	LibraryOptions   map[string]any
	DeadStatuses     []int
	RetryBackoff     time.Duration // first retry's wait; doubles per retry
	ReconnectDelay   time.Duration
	ReconnectMax     time.Duration
}

// Dead says whether status is one of the group's dead-session statuses.
func (e *Env) Dead(status int) bool { return slices.Contains(e.DeadStatuses, status) }

// DeadReply says whether rep means a dead session: its status is a dead one and its body does
// not say the server speaks another protocol era (a 404 carrying -32601 is an unknown method,
// wire.Reply.WrongEra). Such a reply is counted (metrics.WrongEraRequests), never as a death.
func (e *Env) DeadReply(rep *wire.Reply) bool {
	if rep.WrongEra() {
		e.Rec.Inc(metrics.WrongEraRequests)
		return false
	}
	return e.Dead(rep.Status)
}

// Served tells a learning Truth that the server answered a session-scoped POST of the session
// with a success.
func (e *Env) Served(s *wire.Session) {
	if t, ok := e.Truth.(truth.Learner); ok {
		t.Touch(s.ID, time.Now(), true)
	}
}

// ServedStream tells a learning Truth that the server answered a GET of the session without a
// cursor with 200: activity to most servers' idle timers.
func (e *Env) ServedStream(s *wire.Session) {
	e.streamsServed.Add(1)
	if t, ok := e.Truth.(truth.Learner); ok {
		t.Touch(s.ID, time.Now(), false)
	}
}

// StreamsServed counts the GET streams the server answered 200 (ServedStream).
func (e *Env) StreamsServed() int64 { return e.streamsServed.Load() }

// StreamState tells a learning Truth that a GET stream of the session opened or ended.
func (e *Env) StreamState(s *wire.Session, open bool) {
	if t, ok := e.Truth.(truth.Learner); ok {
		t.StreamOpen(s.ID, open, time.Now())
	}
}

// DeathSource says how the death time of s was obtained.
func (e *Env) DeathSource(s *wire.Session) string {
	if t, ok := e.Truth.(truth.Learner); ok {
		return t.Source(s.ID)
	}
	return truth.DeathExact
}

// SubstitutionKnown says whether a success for s after its death is a dead id served as alive
// rather than a death misjudged: the death is exact (the reference server), or the server had
// answered the session as dead before, or it serves ids it never issued (the run's preflight
// found so: truth.Regime.SilentSubstitution), where a death estimated from the TTL is what the
// server did behind an answer that cannot show it.
func (e *Env) SubstitutionKnown(s *wire.Session) bool {
	switch e.DeathSource(s) {
	case truth.DeathExact, truth.DeathObserved:
		return true
	}
	t, ok := e.Truth.(*truth.Estimated)
	return ok && t.Regime.SilentSubstitution
}
