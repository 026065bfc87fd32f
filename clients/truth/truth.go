package truth

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// Truth tells when a session died, as far as the run can know: exactly for the reference
// server (it records each death), estimated for others.
type Truth interface {
	DeadSince(sessionID string) (at time.Time, dead bool)
}

// Func adapts a function to Truth. Its deaths are exact (the reference server's record).
type Func func(string) (time.Time, bool)

func (f Func) DeadSince(id string) (time.Time, bool) { return f(id) }

// How a death time was obtained, as the export counts them.
const (
	DeathExact    = "exact"              // the server recorded it (the reference server)
	DeathFromTTL  = "estimated_from_ttl" // last activity the server answered + the declared TTL
	DeathObserved = "observed"           // a dead status came before the TTL estimate: the death was at or before it
	DeathSources  = 3                    // how many of the above
)

// Learner is a Truth that learns from the client's own traffic (Estimated).
type Learner interface {
	Truth
	Touch(id string, at time.Time, post bool)                             // the server answered a request of the session with a success (a POST, or a GET)
	ObserveDead(id string, at time.Time) (life time.Duration, first bool) // the server answered a request sent at at with a dead status
	StreamOpen(id string, open bool, at time.Time)                        // a GET stream of the session opened or ended
	Forget(id string)                                                     // the client is done with the session
	Source(id string) string                                              // how DeadSince's time was obtained
}

// Regime is what is known of a target's session lifetime beyond its TTL (from `mcpchaos
// inspect` or the workload).
type Regime struct {
	// OpenStreamKeepsAlive: an open GET stream counts as activity, so a session with one open
	// does not idle out (the TS SDK server with its own idle timer does not; some do).
	OpenStreamKeepsAlive bool
	// SilentSubstitution: the server serves a dead session's id with 200 (on a fresh session of
	// the same id, as mcp-go's stateless id manager does), so a success after the estimated
	// death does not prove the session lived on.
	SilentSubstitution bool
	// AbsoluteTTL: the TTL runs from the session's first success (initialize), not its last:
	// a gateway that caps a session's lifetime ends it then however active it is.
	AbsoluteTTL bool
}

// Estimated is the Truth for a server that cannot tell: it assumes the server's declared
// sliding TTL runs from the last session-scoped request the server answered with a success,
// which is how the official Go SDK server (and the reference server) count idleness; an open
// stream counts too where the regime says so. A dead status answered earlier than the TTL
// estimate moves the death there (DeathObserved). Its figures are estimates and the export
// says so.
//
// Every successful POST, every event and every census asks it, from every worker: it is
// sharded by session id, so no lock is shared by all of them; an estimate, once past, stays
// (a later success counts as served-after-death, so the timeline and the summary, which read
// it at different times, never disagree). Sessions the client is done with are forgotten after
// two generations of ends, so its memory follows the sessions held, not all sessions ever.
type Estimated struct {
	TTL    time.Duration
	Regime Regime

	seed   maphash.Seed
	shards [truthShards]truthShard
	// servedAfterDeath counts POST successes for sessions whose death the server had shown (a
	// dead status); refuted counts successes after a death only estimated.
	servedAfterDeath, refuted atomic.Int64
}

const truthShards = 64

// maxEnded is how many ended sessions a shard keeps per generation: late requests of a
// session the client has just left still find its estimate.
const maxEnded = 256

type truthShard struct {
	mu     sync.Mutex
	live   map[string]*estimate
	ended  map[string]*estimate // this generation of ends
	ended2 map[string]*estimate // the one before
}

type estimate struct {
	last    time.Time // last success the server answered
	seen    bool      // a dead answer was seen (its session life taken)
	dead    time.Time // fixed death time, once known or past
	source  string
	streams int // open GET streams
}

// NewEstimated returns an Estimated truth for a declared TTL.
func NewEstimated(ttl time.Duration) *Estimated {
	e := &Estimated{TTL: ttl, seed: maphash.MakeSeed()}
	for i := range e.shards {
		e.shards[i].live = make(map[string]*estimate)
	}
	return e
}

func (e *Estimated) shard(id string) *truthShard {
	return &e.shards[maphash.String(e.seed, id)%truthShards]
}

// find returns id's estimate, creating a live one if create; the shard is locked.
func (s *truthShard) find(id string, create bool) *estimate {
	if x := s.live[id]; x != nil {
		return x
	}
	if x := s.ended[id]; x != nil {
		return x
	}
	if x := s.ended2[id]; x != nil {
		return x
	}
	if !create {
		return nil
	}
	x := &estimate{}
	s.live[id] = x
	return x
}

// deadAt fixes the estimate's death once it has passed; the shard is locked.
func (e *Estimated) deadAt(x *estimate, now time.Time) (time.Time, bool) {
	if !x.dead.IsZero() {
		return x.dead, !now.Before(x.dead)
	}
	if e.TTL <= 0 || x.last.IsZero() || (x.streams > 0 && e.Regime.OpenStreamKeepsAlive) {
		return time.Time{}, false
	}
	d := x.last.Add(e.TTL)
	if now.Before(d) {
		return d, false
	}
	x.dead, x.source = d, DeathFromTTL
	return d, true
}

// Touch notes a success: a POST, or a GET (servers count any request as activity). After a
// death the server showed, a POST success is a dead id served as alive; after a death only
// estimated, a POST success refutes the estimate (the TTL or regime declared is off). A GET
// answered 200 refutes nothing: a permissive GET answers dead sessions so (the replay this
// tool exists to distrust). Either way the death stays where it was put, so that what was
// reported from it holds.
func (e *Estimated) Touch(id string, at time.Time, post bool) {
	s := e.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.find(id, true)
	if _, dead := e.deadAt(x, at); dead {
		switch {
		case x.source == DeathObserved && post:
			e.servedAfterDeath.Add(1)
		case x.source == DeathFromTTL && post && !e.Regime.SilentSubstitution:
			// On a server that serves any id as alive, a success refutes nothing.
			e.refuted.Add(1)
		}
		return
	}
	if at.After(x.last) && !(e.Regime.AbsoluteTTL && !x.last.IsZero()) {
		x.last = at // under an absolute TTL only the first success starts the clock
	}
}

// ObserveDead notes a dead answer to a request sent at at. The first one of a session gives
// its observed life: from its last success (under an absolute TTL, its first) to at. Both ends
// are the server's answers, so the estimate (the declared TTL) takes no part in it: a shorter
// or longer life than declared shows here whatever was estimated.
func (e *Estimated) ObserveDead(id string, at time.Time) (life time.Duration, first bool) {
	s := e.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.find(id, true)
	if _, dead := e.deadAt(x, at); !dead {
		x.dead, x.source = at, DeathObserved
	}
	if x.seen || x.last.IsZero() {
		x.seen = true
		return 0, false
	}
	x.seen = true
	return max(0, at.Sub(x.last)), true
}

func (e *Estimated) StreamOpen(id string, open bool, at time.Time) {
	if !e.Regime.OpenStreamKeepsAlive || e.Regime.AbsoluteTTL {
		return
	}
	s := e.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.find(id, true)
	if _, dead := e.deadAt(x, at); dead {
		return
	}
	if open {
		x.streams++
	} else if x.streams > 0 {
		x.streams--
		if at.After(x.last) {
			x.last = at // the idle time starts when the stream ends
		}
	}
}

func (e *Estimated) Forget(id string) {
	s := e.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.live[id]
	if x == nil {
		return
	}
	delete(s.live, id)
	if s.ended == nil {
		s.ended = make(map[string]*estimate)
	}
	if len(s.ended) >= maxEnded {
		s.ended2, s.ended = s.ended, make(map[string]*estimate)
	}
	s.ended[id] = x
}

func (e *Estimated) Source(id string) string {
	s := e.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if x := s.find(id, false); x != nil && x.source != "" {
		return x.source
	}
	return DeathFromTTL
}

func (e *Estimated) DeadSince(id string) (time.Time, bool) {
	s := e.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.find(id, false)
	if x == nil {
		return time.Time{}, false
	}
	return e.deadAt(x, time.Now())
}

// ServedAfterDeath counts POST successes for sessions the server had answered with a dead
// status: it serves dead ids as alive.
func (e *Estimated) ServedAfterDeath() int64 { return e.servedAfterDeath.Load() }

// Refuted counts successes for sessions past their estimated death (not shown by the server):
// the declared TTL or regime understates how long the server keeps sessions.
func (e *Estimated) Refuted() int64 { return e.refuted.Load() }

// Held counts the sessions the estimate keeps (live and recently ended), for tests.
func (e *Estimated) Held() int {
	n := 0
	for i := range e.shards {
		s := &e.shards[i]
		s.mu.Lock()
		n += len(s.live) + len(s.ended) + len(s.ended2)
		s.mu.Unlock()
	}
	return n
}
