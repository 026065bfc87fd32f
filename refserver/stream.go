package refserver

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// serveGet opens the session's standalone stream, or replays a stream after
// the client's cursor and then follows it. The order of the checks is the
// regime: a Permissive server consults the event log alone as long as the
// cursor is found there (so a replay can succeed for a dead session); a
// Strict one consults the session store first. A GET never refreshes the TTL.
func (s *Server) serveGet(w http.ResponseWriter, r *http.Request) {
	if s.eraRefuses(w, r, nil) {
		return
	}
	if !accepts(r, "text/event-stream") {
		http.Error(w, "Accept must list text/event-stream", http.StatusNotAcceptable)
		return
	}
	key, ok := s.sessionHeader(w, r)
	if !ok {
		return
	}
	now := s.now()
	cursorText := r.Header.Get("Last-Event-ID")
	hasCursor := cursorText != ""
	if (s.cfg.GetValidation == Strict || !hasCursor) && !s.sessions.alive(key, now, s.ttl) {
		s.writeDead(w)
		return
	}
	log := s.logs.get(key)
	if log == nil && hasCursor {
		log = s.hydrate(key, now) // a mirrored log outlives this replica's memory
	}
	if hasCursor {
		cursor, err := strconv.ParseUint(cursorText, 10, 64)
		if err == nil && log != nil {
			if stream, found := log.lookup(now, cursor); found {
				s.follow(w, r, log, newFollower(stream), cursor, true)
				return
			}
		}
		// The cursor is not in the log: only now does a Permissive server
		// ask the session store.
		if !s.sessions.alive(key, now, s.ttl) {
			s.writeDead(w)
			return
		}
		if s.cfg.UnknownCursorStatus != -1 {
			http.Error(w, "unknown Last-Event-ID "+strconv.Quote(cursorText), s.cfg.UnknownCursorStatus)
			return
		}
	}
	if log == nil { // a live session always has a log; be safe anyway
		s.writeDead(w)
		return
	}
	s.follow(w, r, log, newFollower(standaloneStream), 0, false)
}

// follow streams f's stream of the log on this connection until the client
// goes, the server closes, a resume takes the stream over, a resumed POST
// stream is complete, or (Strict only) the session dies. On a resume it
// first replays what followed the cursor; otherwise it starts from a fresh
// priming event.
//
// This handler goroutine is the only one of ours the connection costs
// (net/http adds its background reader): emitters and the ticker poke f, and
// the loop pulls from the log what is new.
func (s *Server) follow(w http.ResponseWriter, r *http.Request, log *eventLog, f *follower, cursor uint64, resume bool) {
	ok := true
	if resume {
		log.resume(f)
	} else {
		cursor, ok = log.open(f, s.now())
	}
	if !ok {
		http.Error(w, "the session's GET stream is already open", http.StatusConflict)
		return
	}
	defer log.detach(f)
	s.streams.Add(1)
	defer s.streams.Add(-1)

	setSSEHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// On a resume the priming event repeats the client's cursor, so that a
	// drop during the replay loses nothing.
	if writePriming(w, cursor, s.cfg.Retry, log.primes) != nil || rc.Flush() != nil {
		return
	}
	strict := s.cfg.GetValidation == Strict
	var batch []event
	for replaying := resume; !f.replaced.Load(); replaying = false {
		var final, ended bool
		batch, final, ended = log.since(batch[:0], s.now(), cursor, f.stream)
		for _, e := range batch {
			if writeEvent(w, e.id, e.data) != nil {
				return
			}
			cursor = e.id
		}
		if replaying {
			s.replayed.Add(int64(len(batch)))
		}
		clear(batch) // hold no event data while waiting
		if f.keepalive.Swap(false) {
			if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil {
				return
			}
		}
		if rc.Flush() != nil {
			return
		}
		if (final && f.stream != standaloneStream) || (ended && strict) {
			return
		}
		select {
		case <-f.wake:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-s.cut:
			return
		}
	}
}

func setSSEHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
}

// writePriming writes the event that opens every SSE stream: an id and empty
// data, so the client holds a cursor before any message arrives. A client
// older than 2025-11-25 (primes false) gets no priming event, only the retry
// field when there is one (a block without data dispatches no event).
func writePriming(w io.Writer, id uint64, retry time.Duration, primes bool) error {
	var err error
	switch {
	case !primes && retry > 0:
		_, err = fmt.Fprintf(w, "retry: %d\n\n", retry.Milliseconds())
	case !primes:
	case retry > 0:
		_, err = fmt.Fprintf(w, "id: %d\nretry: %d\ndata: \n\n", id, retry.Milliseconds())
	default:
		_, err = fmt.Fprintf(w, "id: %d\ndata: \n\n", id)
	}
	return err
}

// writeEvent writes one message. Messages are compact JSON: no newlines.
func writeEvent(w io.Writer, id uint64, data []byte) error {
	_, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", id, data)
	return err
}
