package refserver

import (
	"time"
)

// Causes of a session's death, as Death reports them.
const (
	CauseTTL       = "ttl"       // idle past the session TTL
	CauseDelete    = "delete"    // ended by the client's DELETE
	CauseRestart   = "restart"   // its replica restarted: in-memory sessions are lost
	CauseScale     = "scale"     // its replica was removed
	CauseRebalance = "rebalance" // the router sent it to a replica that never knew it
)

// Death is the exact truth about one session's end: when, why, where.
type Death struct {
	At      time.Time
	Cause   string // one of the Cause constants
	Fault   string // the scheduled fault that killed it; "" for ttl and delete
	Replica int    // the replica that held it (0 for a lone Server)
}

// Death says how the session died, if it is dead.
func (s *Server) Death(sessionID string) (Death, bool) {
	key, ok := parseSessionKey(sessionID)
	if !ok {
		return Death{}, false
	}
	g, dead := s.sessions.death(key, s.now(), s.ttl)
	if !dead {
		return Death{}, false
	}
	return Death{At: time.Unix(0, g.at), Cause: g.cause}, true
}

// deathsAt is a process restart as the sessions see it: every session
// still alive at now dies then with cause; those already dead keep their
// death. It returns how each session the server ever held died, and the logs
// of the sessions it kills, for retire.
func (s *Server) deathsAt(now int64, cause string) (map[sessionKey]grave, []*eventLog) {
	out := make(map[sessionKey]grave)
	var killed []*eventLog
	s.sessions.each(nil, func(rec *session) {
		if g, dead := rec.death(now, s.ttl); dead {
			out[rec.key] = g
			return
		}
		out[rec.key] = grave{now, cause}
		killed = append(killed, rec.log)
	})
	for i := range s.sessions.shards {
		sh := &s.sessions.shards[i]
		sh.mu.RLock()
		for k, g := range sh.graves {
			if _, seen := out[k]; !seen {
				out[k] = g
			}
		}
		sh.mu.RUnlock()
	}
	return out, killed
}

// cutStreams ends every open stream of the server, as a process that starts
// draining closes its connections; it keeps running (and logging) otherwise.
func (s *Server) cutStreams() { s.cutOnce.Do(func() { close(s.cut) }) }

// awaitStreamsEnded waits, at most limit, until the server's stream
// handlers have all returned after cutStreams.
func (s *Server) awaitStreamsEnded(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for s.streams.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // handlers end within a scheduling round once cut
	}
}

// retire ends a replaced process: the logs of the sessions it lost are marked
// ended (a shared log keeps their events for Retention) and it is closed.
func retire(s *Server, killed []*eventLog) {
	for _, l := range killed {
		l.end()
	}
	s.Close()
}

// orphan ends a session whose requests the router now sends elsewhere, so
// that this store agrees with the death the router recorded; false if it was
// not alive here.
func (s *Server) orphan(key sessionKey, now int64, cause string) bool {
	rec := s.sessions.get(key)
	if rec == nil || !rec.end(now, s.ttl) {
		return false
	}
	s.sessions.bury(map[sessionKey]grave{key: {now, cause}})
	rec.log.end()
	return true
}

// hydrate rebuilds a session's log from the mirror when this replica does
// not hold it (it never knew the session, or it restarted since), as a
// server reading a shared Redis log would. The log is marked ended: no
// session here will write to it.
func (s *Server) hydrate(key sessionKey, now int64) *eventLog {
	m := s.limits.mirror
	if m == nil {
		return nil
	}
	events, ok := m.load(key, now)
	if !ok || len(events) == 0 {
		return nil
	}
	l := &eventLog{lim: s.limits, key: key, events: events, ended: true}
	for _, e := range events {
		l.posts = max(l.posts, e.stream)
	}
	return s.logs.addIfAbsent(key, l)
}
