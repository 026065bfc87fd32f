package refserver

import "net/http"

// The answers to a resume whose cursor the event log of a live session evicted
// (Config.EvictedCursor).
const (
	// EvictedUnknown answers it as any unknown cursor: UnknownCursorStatus.
	EvictedUnknown = "unknown"
	// EvictedDead answers it exactly as a dead session (DeadStatus, DeadBody): an event store
	// that evicts events and has no other answer than "not found", as the SDKs' in-memory
	// stores do, so that a conforming client abandons a session that is alive.
	EvictedDead = "dead"
)

// EvictedCursors lists Config.EvictedCursor's values; the first is the default.
func EvictedCursors() []string { return []string{EvictedUnknown, EvictedDead} }

// wasEvicted says whether cursor is at or below the newest event id this log evicted (by
// RetentionEvents or Retention): a cursor the log once held, or one as old. Ids are the
// server's, so an id from before the log's first eviction is not "evicted" but unknown.
func (l *eventLog) wasEvicted(cursor uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.evicted != 0 && cursor <= l.evicted
}

// answerEvicted answers a resume of a live session whose cursor the log evicted, when the
// regime says to answer it as a dead session; it reports whether it answered. The session
// stays alive: a client that abandons it has declared a live session dead, which the server
// counts (Stats.LiveResumesAnsweredDead) and the run judges against its death record.
func (s *Server) answerEvicted(w http.ResponseWriter, log *eventLog, cursor uint64, parsed bool) bool {
	if s.cfg.EvictedCursor != EvictedDead || !parsed || log == nil || !log.wasEvicted(cursor) {
		return false
	}
	s.evictedDead.Add(1)
	w.Header().Set("Content-Type", s.deadType)
	w.WriteHeader(s.cfg.DeadStatus)
	_, _ = w.Write([]byte(s.cfg.DeadBody))
	return true
}
