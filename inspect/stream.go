package inspect

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/clients"
)

// rawStream is a GET stream as the server answered it, read in one of a few ways.
type rawStream struct {
	status int
	resp   *http.Response
	cancel context.CancelFunc
	ended  atomic.Bool // the body ended (held streams)
}

// openStream sends a GET as s (with cursor, if any) and returns once headers are in; nil when
// it failed in transport (noted).
func (in *inspector) openStream(ctx context.Context, s *clients.Session, cursor string) *rawStream {
	rctx, cancel := context.WithCancel(ctx)
	headers := time.AfterFunc(in.o.Timeout, cancel)
	resp, err := s.Do(rctx, http.MethodGet, cursor, nil)
	headers.Stop()
	if err != nil {
		cancel()
		if ctx.Err() == nil {
			in.note("GET failed: %v", err)
		}
		return nil
	}
	rs := &rawStream{status: resp.StatusCode, resp: resp, cancel: cancel}
	if resp.StatusCode != http.StatusOK {
		rs.close()
	}
	return rs
}

func (rs *rawStream) close() {
	if rs == nil {
		return
	}
	rs.cancel()
	rs.resp.Body.Close()
}

// hold reads the stream in the background until it ends, so that the server can write to it
// and open can tell whether it still stands.
func (rs *rawStream) hold() {
	go func() {
		_, _ = io.Copy(io.Discard, rs.resp.Body)
		rs.ended.Store(true)
	}()
}

// open reports whether a held stream still stands.
func (rs *rawStream) open() bool { return rs != nil && !rs.ended.Load() }

// events yields the stream's events to keep until it ends or wait passes; the stream is
// closed afterwards.
func (rs *rawStream) events(maxEvent int, wait time.Duration, keep func(clients.Event) bool) {
	done := make(chan struct{})
	timer := time.AfterFunc(wait, func() { rs.close() })
	defer timer.Stop()
	go func() {
		defer close(done)
		for ev, err := range clients.ReadEvents(rs.resp.Body, maxEvent) {
			if err != nil || !keep(ev) {
				return
			}
		}
	}()
	<-done
}

// ids returns up to n distinct event ids (priming events included) that arrive within wait.
func (rs *rawStream) ids(maxEvent, n int, wait time.Duration) []string {
	var ids []string
	rs.events(maxEvent, wait, func(ev clients.Event) bool {
		if ev.Cursor != "" && (len(ids) == 0 || ids[len(ids)-1] != ev.Cursor) {
			ids = append(ids, ev.Cursor)
		}
		return len(ids) < n
	})
	return ids
}

// dataIDs returns the ids of the events with data that arrive within wait.
func (rs *rawStream) dataIDs(maxEvent int, wait time.Duration) []string {
	var ids []string
	rs.events(maxEvent, wait, func(ev clients.Event) bool {
		if ev.Data != "" {
			ids = append(ids, ev.Cursor)
		}
		return true
	})
	return ids
}

// keepalive watches an idle stream for idle and returns the interval of what arrived on it
// after the stream opened (comments or events): the gap between the first two arrivals, or
// from the opening to the only one. ok is false when nothing arrived. The first event is not
// counted: it is the priming event servers send on opening (an empty event, or a comment such
// as ": ok"), or else the first keepalive, and only what follows it proves one. Events are
// counted by their ends (a blank line), not by reads or by time, so the verdict does not
// depend on how busy either machine is.
func (rs *rawStream) keepalive(idle time.Duration) (time.Duration, bool) {
	opened := time.Now()
	arrivals := make(chan time.Time, 64)
	go func() {
		defer close(arrivals)
		buf := make([]byte, 4<<10)
		var prev byte
		for {
			n, err := rs.resp.Body.Read(buf)
			now := time.Now()
			for _, b := range buf[:n] {
				if b == '\n' && prev == '\n' { // an event or a comment ends
					select {
					case arrivals <- now:
					default:
					}
				}
				if b != '\r' {
					prev = b
				}
			}
			if err != nil {
				return
			}
		}
	}()
	timer := time.NewTimer(idle)
	defer timer.Stop()
	var seen []time.Time
	primed := false
	for {
		select {
		case t, ok := <-arrivals:
			if !ok {
				return gap(opened, seen)
			}
			if !primed {
				primed = true
				continue
			}
			seen = append(seen, t)
			if len(seen) == 2 {
				rs.close()
				return gap(opened, seen)
			}
		case <-timer.C:
			rs.close()
			return gap(opened, seen)
		}
	}
}

func gap(opened time.Time, seen []time.Time) (time.Duration, bool) {
	switch len(seen) {
	case 0:
		return 0, false
	case 1:
		return seen[0].Sub(opened), true
	}
	return seen[1].Sub(seen[0]), true
}
