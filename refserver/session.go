package refserver

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"
)

// shardCount is how many independently locked parts the session store and
// the log store are split into. Session keys are random, so their first byte
// spreads them evenly.
const shardCount = 64

// sessionKey is a session id in binary form: 16 random bytes, sent on the
// wire as 32 lowercase hex digits.
type sessionKey [16]byte

func newSessionKey() sessionKey {
	var k sessionKey
	rand.Read(k[:]) // never fails: crypto/rand panics rather than return an error
	return k
}

func (k sessionKey) String() string { return hex.EncodeToString(k[:]) }

func (k sessionKey) shard() int { return int(k[0]) % shardCount }

// parseSessionKey reads a session id; false if it cannot be one we issued.
func parseSessionKey(s string) (sessionKey, bool) {
	var k sessionKey
	if len(s) != 2*len(k) {
		return k, false
	}
	_, err := hex.Decode(k[:], []byte(s))
	return k, err == nil
}

// session is the store's record of one session: only what liveness needs.
// Its fields are atomics so that checking and refreshing liveness takes no
// lock. The event log is deliberately not here: it outlives the record.
type session struct {
	key         sessionKey
	log         *eventLog
	lastRefresh atomic.Int64  // unix nanos of the last session-scoped POST
	deleted     atomic.Int64  // unix nanos of the DELETE that ended it; 0 if none
	notified    atomic.Uint64 // notifications/message sent, numbering their seq
	noticed     atomic.Bool   // its death has been counted (leak.go)
}

// deadSince says when the session died if it is dead at now. ttl 0 means no
// idle expiry. A session whose lastRefresh+ttl <= now is dead, whether or
// not the reaper has seen it.
func (s *session) deadSince(now, ttl int64) (int64, bool) {
	last, del := s.lastRefresh.Load(), s.deleted.Load()
	switch {
	case ttl > 0 && last+ttl <= now && (del == 0 || last+ttl < del):
		return last + ttl, true
	case del != 0:
		return del, true
	}
	return 0, false
}

// death is deadSince with its cause.
func (s *session) death(now, ttl int64) (grave, bool) {
	at, dead := s.deadSince(now, ttl)
	if !dead {
		return grave{}, false
	}
	if at == s.deleted.Load() {
		return grave{at, CauseDelete}, true
	}
	return grave{at, CauseTTL}, true
}

// touch refreshes the idle TTL if the session is alive at now, and says
// whether it was. Under an absolute TTL nothing refreshes it: lastRefresh
// stays at initialize, so the session dies a TTL after it however active.
func (s *session) touch(now, ttl int64, absolute bool) bool {
	for {
		last := s.lastRefresh.Load()
		if s.deleted.Load() != 0 || (ttl > 0 && last+ttl <= now) {
			return false
		}
		if absolute || now <= last || s.lastRefresh.CompareAndSwap(last, now) {
			return true
		}
	}
}

// end kills a live session at now (DELETE); false if it was already dead.
func (s *session) end(now, ttl int64) bool {
	if _, dead := s.deadSince(now, ttl); dead {
		return false
	}
	return s.deleted.CompareAndSwap(0, now)
}

// sessionStore holds the session records and, once the reaper has freed a
// record, its death time (a grave), so DeathTime answers for the whole run.
type sessionStore struct {
	shards [shardCount]sessionShard
	held   atomic.Int64 // records, dead or alive: what MaxSessions caps
}

type sessionShard struct {
	mu      sync.RWMutex
	records map[sessionKey]*session // not yet reaped; some may already be dead
	graves  map[sessionKey]grave    // reaped: when and how they died
}

// grave is what the store keeps of a reaped session.
type grave struct {
	at    int64  // unix nanos of death
	cause string // CauseTTL or CauseDelete
}

func (st *sessionStore) init() {
	for i := range st.shards {
		st.shards[i].records = make(map[sessionKey]*session)
		st.shards[i].graves = make(map[sessionKey]grave)
	}
}

func (st *sessionStore) add(s *session) {
	st.held.Add(1)
	st.insert(s)
}

// reserve takes a place for a record that insert will add, unless the store already holds
// max records (max 0: no cap). Reserving first keeps concurrent initializes from overshooting
// the cap.
func (st *sessionStore) reserve(max int) bool {
	if n := st.held.Add(1); max > 0 && n > int64(max) {
		st.held.Add(-1)
		return false
	}
	return true
}

// insert adds a record whose place was reserved.
func (st *sessionStore) insert(s *session) {
	sh := &st.shards[s.key.shard()]
	sh.mu.Lock()
	sh.records[s.key] = s
	sh.mu.Unlock()
}

// get returns the record of k, or nil if it was never issued or is reaped.
func (st *sessionStore) get(k sessionKey) *session {
	sh := &st.shards[k.shard()]
	sh.mu.RLock()
	s := sh.records[k]
	sh.mu.RUnlock()
	return s
}

// alive is the store's liveness verdict on k at now.
func (st *sessionStore) alive(k sessionKey, now, ttl int64) bool {
	s := st.get(k)
	if s == nil {
		return false
	}
	_, dead := s.deadSince(now, ttl)
	return !dead
}

// bury replaces the records of dead sessions with their death times.
func (st *sessionStore) bury(deaths map[sessionKey]grave) {
	for k, g := range deaths {
		sh := &st.shards[k.shard()]
		sh.mu.Lock()
		if _, ok := sh.records[k]; ok {
			delete(sh.records, k)
			st.held.Add(-1)
		}
		sh.graves[k] = g
		sh.mu.Unlock()
	}
}

// deathTime says when k died, if it is dead at now.
func (st *sessionStore) deathTime(k sessionKey, now, ttl int64) (time.Time, bool) {
	g, dead := st.death(k, now, ttl)
	if !dead {
		return time.Time{}, false
	}
	return time.Unix(0, g.at), true
}

// death says when and how k died, if it is dead at now.
func (st *sessionStore) death(k sessionKey, now, ttl int64) (grave, bool) {
	sh := &st.shards[k.shard()]
	sh.mu.RLock()
	s := sh.records[k]
	g, buried := sh.graves[k]
	sh.mu.RUnlock()
	if s != nil {
		return s.death(now, ttl)
	}
	return g, buried
}

// each calls fn for every unreaped record, holding no lock while fn runs.
// buf is reused between shards and returned for the next call.
func (st *sessionStore) each(buf []*session, fn func(*session)) []*session {
	for i := range st.shards {
		sh := &st.shards[i]
		buf = buf[:0]
		sh.mu.RLock()
		for _, s := range sh.records {
			buf = append(buf, s)
		}
		sh.mu.RUnlock()
		for _, s := range buf {
			fn(s)
		}
	}
	clear(buf[:cap(buf)]) // let reaped sessions go
	return buf[:0]
}

// count tells how many sessions are alive at now and how many have died.
func (st *sessionStore) count(now, ttl int64) (live, died int64) {
	for i := range st.shards {
		sh := &st.shards[i]
		sh.mu.RLock()
		died += int64(len(sh.graves))
		for _, s := range sh.records {
			if _, dead := s.deadSince(now, ttl); dead {
				died++
			} else {
				live++
			}
		}
		sh.mu.RUnlock()
	}
	return live, died
}
