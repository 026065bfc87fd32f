package inspect

import (
	"context"
	"io"
	"net/http"

	"github.com/mcpchaos/mcpchaos/clients/wire"
)

// killTries bounds the sessions killByDelete opens: one that died of its TTL before the
// DELETE (inspect's steps slowed by a loaded machine or server) is replaced by a fresh one,
// rather than read as a server that refuses DELETE.
const killTries = 2

// killByDelete opens a session, takes a trail of its event ids, ends it with DELETE and looks
// at what the dead session gets.
func (in *inspector) killByDelete(ctx context.Context) error {
	fp := in.fp
	var c *wire.Session
	var t *trail
	for try := 1; ; try++ {
		var err error
		if c, err = in.open(ctx); err != nil {
			return &UnreachableError{err}
		}
		t = in.acquire(ctx, c)
		// Refresh it first: with a short TTL the steps above may have taken a good part of it.
		if st, _ := in.ping(ctx, c); st != nil && *st/100 == 2 {
			break
		}
		if try == killTries || ctx.Err() != nil {
			in.note("the session to DELETE was already dead before the DELETE, %d times (the TTL is shorter than inspect's steps): its facts are taken as a TTL death", try)
			break
		}
		in.note("the session to DELETE died before the DELETE (inspect's steps outlasted the TTL): tried again with a fresh session")
	}
	if t == nil {
		in.note("no SSE event id came on any reply (ping, logging/setLevel, tool calls with a progress token) or on the GET stream: replays could not be tried")
	} else {
		fp.CursorVia = t.via
	}
	del := in.status(ctx, c, http.MethodDelete)
	switch {
	case del != nil && *del/100 == 2:
		fp.DeadStatus.KilledBy = "delete"
		in.deadFacts(ctx, c, t)
		fp.DeadStatus.Delete = in.status(ctx, c, http.MethodDelete)
	case del != nil:
		in.note("the server refused DELETE with %d: clients cannot end sessions; dead-session facts come from the TTL when one is declared (--ttl)", *del)
	default:
		in.note("DELETE failed in transport")
	}
	return nil
}

// deadFacts fills in what the session s, killed by DELETE, gets.
func (in *inspector) deadFacts(ctx context.Context, s *wire.Session, t *trail) {
	fp := in.fp
	ds := &fp.DeadStatus
	ds.Post, fp.SilentSubstitution = in.ping(ctx, s)
	ds.Get = in.status(ctx, s, http.MethodGet)
	if ds.Get != nil && *ds.Get != 405 && *ds.Get != 409 && *ds.Get/100 != 5 { // none says the session is dead
		fp.GetValidatesSession = ptr(*ds.Get != http.StatusOK)
	}
	if t != nil {
		r := in.replayDead(ctx, s, t, ds.Get)
		ds.GetWithCursor, fp.ReplayAfterDeath = r.status, r.lies
		if isTrue(r.lies) {
			fp.ReplayedEvents = ptr(r.events)
		}
		in.crossSession(ctx, t)
	}
	in.probeMethods(ctx, s)
}

// probeMethods tells, for ping and tools/list, whether a dead session s gets them refused:
// only then is the method a liveness probe.
func (in *inspector) probeMethods(ctx context.Context, s *wire.Session) {
	for _, m := range []string{"ping", "tools/list"} {
		r := in.call(ctx, s, m)
		pm := ProbeMethod{}
		if r != nil {
			pm.DeadStatus = ptr(r.status)
			if r.violation == "" {
				pm.Valid = ptr(r.refused())
			}
		}
		in.fp.ProbeMethods[m] = pm
	}
}

// ttlFacts looks at the sessions left idle (and held by an open stream) past the TTL.
func (in *inspector) ttlFacts(ctx context.Context, w *ttlWatch, mainFromTTL bool) {
	fp := in.fp
	defer w.stream.close()
	fp.TTLMode = in.ttlMode(w.active)
	if w.idle == nil {
		in.note("could not open the session to let expire")
		return
	}
	d := &Death{}
	var served *bool
	d.Post, served = in.ping(ctx, w.idle)
	d.Expired = d.Post != nil && *d.Post/100 != 2
	if !d.Expired {
		switch {
		case served != nil && isTrue(fp.SilentSubstitution):
			// A session killed by DELETE was served too: the server serves any id, so a
			// session it swept at its TTL answers as a new one under the same id.
			d.ExpiryUnseen = true
			in.note("a session idle for the declared TTL (%s) plus %s was still served, as was a session killed by DELETE: the server serves any id, so whether its sessions expire cannot be seen from a client; TTL facts are unknown", in.o.TTL, ttlMargin(in.o.TTL))
		case served != nil:
			in.note("a session idle for the declared TTL (%s) plus %s was still served: the server's TTL is longer, or counts idleness differently; TTL facts are unknown", in.o.TTL, ttlMargin(in.o.TTL))
		}
		fp.AfterTTL = d
		return
	}
	d.SilentSubstitution = served
	d.Get = in.status(ctx, w.idle, http.MethodGet)
	if d.Get != nil && *d.Get != 405 {
		d.GetValidatesSession = ptr(*d.Get != http.StatusOK)
	}
	if w.trail != nil {
		r := in.replayDead(ctx, w.idle, w.trail, d.Get)
		d.GetWithCursor, d.ReplayAfterDeath = r.status, r.lies
	}
	fp.AfterTTL = d
	if mainFromTTL {
		// DELETE was refused: the TTL's death is the only one to report.
		fp.DeadStatus = DeadStatus{KilledBy: "ttl", Post: d.Post, Get: d.Get, GetWithCursor: d.GetWithCursor}
		fp.GetValidatesSession, fp.ReplayAfterDeath, fp.SilentSubstitution = d.GetValidatesSession, d.ReplayAfterDeath, d.SilentSubstitution
		if w.trail != nil {
			fp.CursorVia = w.trail.via
			in.crossSession(ctx, w.trail)
		}
		in.probeMethods(ctx, w.idle)
	}
	in.heldFacts(ctx, w)
}

// heldFacts tells whether the session whose GET stream was held open outlived the TTL.
func (in *inspector) heldFacts(ctx context.Context, w *ttlWatch) {
	if w.held == nil || !w.stream.stream() {
		in.note("could not hold a GET stream open on a session: open_stream_holds_session is unknown")
		return
	}
	open := w.stream.open()
	st, served := in.ping(ctx, w.held)
	if served == nil && (st == nil || *st/100 == 2) {
		return // no answer, or garbage: unknown
	}
	alive := isTrue(served)
	in.fp.OpenStreamHoldsSession = ptr(alive)
	if !alive && !open {
		in.note("the server closed the held GET stream when the session expired")
	}
}

// ping sends ping as s: its status, and whether it was served as a live session's (nil when
// the answer was garbage or never came).
func (in *inspector) ping(ctx context.Context, s *wire.Session) (*int, *bool) {
	r := in.call(ctx, s, "ping")
	if r == nil {
		return nil, nil
	}
	if r.violation != "" {
		return ptr(r.status), nil
	}
	return ptr(r.status), ptr(r.served())
}

// call sends a request without params as s, within the request timeout.
func (in *inspector) call(ctx context.Context, s *wire.Session, method string) *reply {
	rctx, cancel := context.WithTimeout(ctx, in.o.Timeout)
	defer cancel()
	return in.exchange(rctx, s, in.nextID(), method, nil)
}

// duplicateGet opens two GET streams of one session and returns the second one's status.
func (in *inspector) duplicateGet(ctx context.Context) *int {
	s, err := in.open(ctx)
	if err != nil {
		in.note("duplicate GET: %v", err)
		return nil
	}
	defer s.Delete(ctx)
	first := in.openStream(ctx, s, "")
	if first == nil || first.garbage != "" {
		return nil
	}
	defer first.close()
	if first.status != http.StatusOK {
		in.note("a GET stream got %d: the server offers no standalone stream", first.status)
		return nil
	}
	second := in.openStream(ctx, s, "")
	if second == nil || second.garbage != "" {
		return nil
	}
	second.close()
	return ptr(second.status)
}

// status sends a GET (without cursor) or a DELETE as s and returns its status, or nil when it
// failed in transport or a GET's 200 was not a stream.
func (in *inspector) status(ctx context.Context, s *wire.Session, method string) *int {
	if method == http.MethodGet {
		rs := in.openStream(ctx, s, "")
		if rs == nil || rs.garbage != "" {
			return nil
		}
		rs.close()
		return ptr(rs.status)
	}
	rctx, cancel := context.WithTimeout(ctx, in.o.Timeout)
	defer cancel()
	resp, err := s.Do(rctx, method, "", nil)
	if err != nil {
		if ctx.Err() == nil {
			in.note("%s failed: %v", method, err)
		}
		return nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return ptr(resp.StatusCode)
}
