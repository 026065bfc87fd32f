package inspect

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients"
)

// Options say how to reach the server and how long to look.
type Options struct {
	Conn clients.Conn // the server (Dial unset: inspect talks to it directly)
	// TTL is the server's declared session TTL; 0 skips what needs one (open_stream_holds_session,
	// after_ttl). Inspect then waits TTL plus a margin.
	TTL time.Duration
	// Idle is how long an idle GET stream is watched for keepalives (default 10s).
	Idle time.Duration
	// Timeout bounds every request (default 10s).
	Timeout time.Duration
	// Protocol is the session-family version offered (default 2025-11-25).
	Protocol string
	// Progress, if set, gets a line per step.
	Progress func(string)
}

// ttlMargin is how long past the declared TTL inspect waits before it calls a session dead.
func ttlMargin(ttl time.Duration) time.Duration { return max(ttl/2, 500*time.Millisecond) }

// UnreachableError means the server could not be inspected at all.
type UnreachableError struct{ Err error }

func (e *UnreachableError) Error() string { return "could not inspect: " + e.Err.Error() }
func (e *UnreachableError) Unwrap() error { return e.Err }

type inspector struct {
	o  Options
	ep *clients.Endpoint
	fp *Fingerprint
}

// Inspect fingerprints the server. It returns an *UnreachableError when it could not inspect
// at all (unreachable, or initialize refused); whatever it could find otherwise is in the
// Fingerprint, with notes for what it could not.
func Inspect(ctx context.Context, o Options) (*Fingerprint, error) {
	if o.Idle <= 0 {
		o.Idle = 10 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Protocol == "" {
		o.Protocol = clients.Protocol20251125
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	hc, err := clients.NewHTTPClient(o.Conn)
	if err != nil {
		return nil, &UnreachableError{err}
	}
	defer hc.CloseIdleConnections()
	in := &inspector{o: o, fp: &Fingerprint{URL: redact(o.Conn), ProbeMethods: map[string]ProbeMethod{}},
		ep: &clients.Endpoint{URL: o.Conn.URL.String(), HTTP: hc, Protocol: o.Protocol, RequestTimeout: o.Timeout,
			MaxBody: 4 << 20, MaxEvent: 1 << 20, ClientName: "mcpchaos-inspect"}}
	if err := in.run(ctx); err != nil {
		return nil, err
	}
	in.fp.judge()
	return in.fp, nil
}

func (in *inspector) note(format string, args ...any) {
	in.fp.Notes = append(in.fp.Notes, fmt.Sprintf(format, args...))
}

func (in *inspector) run(ctx context.Context) error {
	fp := in.fp
	in.o.Progress("negotiating the protocol generation")
	n, err := in.ep.Negotiate(ctx)
	if err != nil {
		return &UnreachableError{err}
	}
	fp.SupportedVersions = n.Supported
	fp.Generation = n.Generation.String()
	if n.Generation == clients.Stateless {
		fp.NegotiatedProtocol = n.Protocol
		in.ep.Generation, in.ep.Protocol = clients.Stateless, n.Protocol
		s, _, _ := in.ep.Initialize(ctx)
		rep, err := s.ListTools(ctx)
		if err != nil || !rep.OK() {
			return &UnreachableError{fmt.Errorf("the server speaks only %s, and refused tools/list in it: %s", n.Protocol, describe(rep, err))}
		}
		in.note("the server speaks only the stateless revision %s (it named %v): there are no sessions to kill, so the session facts are null", n.Protocol, n.Supported)
		return nil
	}

	in.o.Progress("initializing")
	a, err := in.open(ctx)
	if err != nil {
		return &UnreachableError{err}
	}
	fp.NegotiatedProtocol = a.Protocol
	fp.SessionIDs = a.ID != ""

	// The keepalive watch runs beside everything else on a session of its own.
	var watch sync.WaitGroup
	watch.Go(func() { in.watchKeepalive(ctx, a) })
	defer watch.Wait()

	fp.MissingSessionStatus = in.status(ctx, a.Detached(""), http.MethodPost, "", ping(900))
	if !fp.SessionIDs {
		in.note("initialize gave no Mcp-Session-Id: the server keeps no sessions, so there is nothing to kill and the dead-session facts are null")
		return nil
	}

	// TTL sessions first, so that their wait overlaps the rest.
	var ttlIdle, ttlHeld *clients.Session
	var ttlCursor string
	var ttlStart time.Time
	var heldStream *rawStream
	if in.o.TTL > 0 {
		if ttlIdle, err = in.open(ctx); err == nil {
			ttlCursor, _ = in.cursor(ctx, ttlIdle)
		}
		if ttlHeld, err = in.open(ctx); err == nil {
			if heldStream = in.openStream(ctx, ttlHeld, ""); heldStream != nil && heldStream.status == http.StatusOK {
				heldStream.hold()
			} else {
				heldStream = nil
			}
		}
		ttlStart = time.Now()
	}

	in.o.Progress("a second GET stream on one session")
	fp.DuplicateGetStatus = in.duplicateGet(ctx)

	in.o.Progress("killing a session with DELETE")
	c, err := in.open(ctx)
	if err != nil {
		return &UnreachableError{err}
	}
	cursor, later := in.cursor(ctx, c)
	if cursor == "" {
		in.note("no SSE event id came on a POST reply or the GET stream: replays could not be tried")
	}
	// Refresh it first: with a short TTL the steps above may have taken a good part of it.
	if st, _ := in.post(ctx, c); st == nil || *st/100 != 2 {
		in.note("the session to DELETE was already dead before the DELETE (the TTL is shorter than inspect's steps): its facts are taken as a TTL death")
	}
	del := in.status(ctx, c, http.MethodDelete, "", nil)
	switch {
	case del != nil && *del/100 == 2:
		fp.DeadStatus.KilledBy = "delete"
		in.deadFacts(ctx, c, cursor, later, false)
		fp.DeadStatus.Delete = in.status(ctx, c, http.MethodDelete, "", nil)
	case del != nil:
		in.note("the server refused DELETE with %d: clients cannot end sessions; dead-session facts come from the TTL when one is declared (--ttl)", *del)
	default:
		in.note("DELETE failed in transport")
	}

	if in.o.TTL > 0 {
		wait := time.Until(ttlStart.Add(in.o.TTL + ttlMargin(in.o.TTL)))
		in.o.Progress(fmt.Sprintf("waiting %s for the declared TTL (%s) to pass", wait.Round(time.Millisecond), in.o.TTL))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		in.ttlFacts(ctx, ttlIdle, ttlCursor, ttlHeld, heldStream, fp.DeadStatus.KilledBy == "")
	} else {
		in.note("no --ttl given: open_stream_holds_session and the facts of a TTL death were not measured")
	}
	return nil
}

// shortWait is how long inspect waits for events to arrive on a stream: short enough that a
// session with a short declared TTL survives the wait.
func (in *inspector) shortWait() time.Duration {
	if in.o.TTL > 0 {
		return min(500*time.Millisecond, in.o.TTL/4)
	}
	return 500 * time.Millisecond
}

// open initializes a session.
func (in *inspector) open(ctx context.Context) (*clients.Session, error) {
	s, rep, err := in.ep.Initialize(ctx)
	if err != nil {
		return nil, fmt.Errorf("initialize: %s", describe(rep, err))
	}
	return s, nil
}

// deadFacts fills in what a dead session (killed by DELETE, or by the TTL when fromTTL) gets.
func (in *inspector) deadFacts(ctx context.Context, s *clients.Session, cursor string, later []string, fromTTL bool) {
	fp := in.fp
	ds := &fp.DeadStatus
	ds.Post, fp.SilentSubstitution = in.post(ctx, s)
	ds.Get = in.status(ctx, s, http.MethodGet, "", nil)
	if ds.Get != nil && *ds.Get != 405 {
		fp.GetValidatesSession = ptr(*ds.Get != http.StatusOK)
	}
	if cursor != "" {
		st, n := in.replay(ctx, s, cursor, nil)
		ds.GetWithCursor = st
		if st != nil && *st != 405 {
			fp.ReplayAfterDeath = ptr(*st == http.StatusOK)
			if *st == http.StatusOK {
				fp.ReplayedEvents = ptr(n)
			}
		}
		in.crossSession(ctx, cursor, later)
	}
	for _, m := range []string{"ping", "tools/list"} {
		st := in.status(ctx, s, http.MethodPost, "", call(m, 910))
		pm := ProbeMethod{DeadStatus: st}
		if st != nil {
			pm.Valid = ptr(*st/100 != 2)
		}
		fp.ProbeMethods[m] = pm
	}
	if fromTTL {
		ds.KilledBy = "ttl"
	}
}

// ttlFacts looks at the sessions left idle (and held by an open stream) past the TTL.
func (in *inspector) ttlFacts(ctx context.Context, idle *clients.Session, cursor string, held *clients.Session, hs *rawStream, mainFromTTL bool) {
	fp := in.fp
	if idle == nil {
		in.note("could not open the session to let expire")
		return
	}
	d := &Death{}
	d.Post, d.SilentSubstitution = in.post(ctx, idle)
	d.Expired = d.Post != nil && *d.Post/100 != 2
	if !d.Expired {
		in.note("a session idle for the declared TTL (%s) plus %s was still served: the server's TTL is longer, or counts idleness differently; TTL facts are unknown", in.o.TTL, ttlMargin(in.o.TTL))
		d.SilentSubstitution = nil
		fp.AfterTTL = d
		hs.close()
		return
	}
	d.Get = in.status(ctx, idle, http.MethodGet, "", nil)
	if d.Get != nil && *d.Get != 405 {
		d.GetValidatesSession = ptr(*d.Get != http.StatusOK)
	}
	if cursor != "" {
		d.GetWithCursor, _ = in.replay(ctx, idle, cursor, nil)
		if d.GetWithCursor != nil && *d.GetWithCursor != 405 {
			d.ReplayAfterDeath = ptr(*d.GetWithCursor == http.StatusOK)
		}
	}
	fp.AfterTTL = d
	if mainFromTTL {
		// DELETE was refused: the TTL's death is the only one to report.
		fp.DeadStatus = DeadStatus{KilledBy: "ttl", Post: d.Post, Get: d.Get, GetWithCursor: d.GetWithCursor}
		fp.GetValidatesSession, fp.ReplayAfterDeath, fp.SilentSubstitution = d.GetValidatesSession, d.ReplayAfterDeath, d.SilentSubstitution
		for _, m := range []string{"ping", "tools/list"} {
			st := in.status(ctx, idle, http.MethodPost, "", call(m, 920))
			pm := ProbeMethod{DeadStatus: st}
			if st != nil {
				pm.Valid = ptr(*st/100 != 2)
			}
			fp.ProbeMethods[m] = pm
		}
	}
	switch {
	case held == nil || hs == nil:
		in.note("could not hold a GET stream open on a session: open_stream_holds_session is unknown")
	default:
		open := hs.open()
		st, _ := in.post(ctx, held)
		alive := st != nil && *st/100 == 2
		fp.OpenStreamHoldsSession = ptr(alive)
		if !alive && !open {
			in.note("the server closed the held GET stream when the session expired")
		}
	}
	hs.close()
}

// post sends ping as s and reports the status, and whether a dead session was served 2xx.
func (in *inspector) post(ctx context.Context, s *clients.Session) (*int, *bool) {
	st := in.status(ctx, s, http.MethodPost, "", ping(930))
	if st == nil {
		return nil, nil
	}
	return st, ptr(*st/100 == 2)
}

// duplicateGet opens two GET streams of one session and returns the second one's status.
func (in *inspector) duplicateGet(ctx context.Context) *int {
	s, err := in.open(ctx)
	if err != nil {
		in.note("duplicate GET: %v", err)
		return nil
	}
	first := in.openStream(ctx, s, "")
	if first == nil {
		return nil
	}
	defer first.close()
	if first.status != http.StatusOK {
		in.note("a GET stream got %d: the server offers no standalone stream", first.status)
		return nil
	}
	second := in.openStream(ctx, s, "")
	if second == nil {
		return nil
	}
	second.close()
	_, _ = s.Delete(ctx)
	return ptr(second.status)
}

// crossSession replays a dead session's cursor on a fresh live session.
func (in *inspector) crossSession(ctx context.Context, cursor string, later []string) {
	d, err := in.open(ctx)
	if err != nil {
		return
	}
	defer d.Delete(ctx)
	st, ids := in.replayIDs(ctx, d, cursor)
	switch {
	case st == nil || *st == 405:
	case *st != http.StatusOK:
		in.fp.CrossSessionReplay = ptr(false)
	case len(later) == 0:
		in.note("cross-session replay: the live session's replay answered 200, but the dead session had no events after its cursor to recognise")
	default:
		in.fp.CrossSessionReplay = ptr(slices.ContainsFunc(ids, func(id string) bool { return slices.Contains(later, id) }))
	}
}

// cursor finds an SSE event id of s: from a POST reply streamed as SSE (its priming event, and
// the ids after it), else from the GET stream. later are the ids that followed the cursor.
func (in *inspector) cursor(ctx context.Context, s *clients.Session) (string, []string) {
	rctx, cancel := context.WithTimeout(ctx, in.o.Timeout)
	defer cancel()
	resp, err := s.Do(rctx, http.MethodPost, "", ping(940))
	if err == nil {
		ids := eventIDs(resp, in.ep.MaxEvent, 0)
		if len(ids) > 0 {
			return ids[0], ids[1:]
		}
	}
	st := in.openStream(ctx, s, "")
	if st == nil || st.status != http.StatusOK {
		st.close()
		return "", nil
	}
	ids := st.ids(in.ep.MaxEvent, 2, in.shortWait())
	st.close()
	if len(ids) == 0 {
		return "", nil
	}
	return ids[0], ids[1:]
}

// replay sends a GET with cursor as s and counts the events it delivers within a short wait.
func (in *inspector) replay(ctx context.Context, s *clients.Session, cursor string, _ []string) (*int, int) {
	st, ids := in.replayIDs(ctx, s, cursor)
	return st, len(ids)
}

func (in *inspector) replayIDs(ctx context.Context, s *clients.Session, cursor string) (*int, []string) {
	rs := in.openStream(ctx, s, cursor)
	if rs == nil {
		return nil, nil
	}
	defer rs.close()
	if rs.status != http.StatusOK {
		return ptr(rs.status), nil
	}
	var out []string
	out = append(out, rs.dataIDs(in.ep.MaxEvent, min(300*time.Millisecond, in.shortWait()))...)
	return ptr(rs.status), out
}

// status sends one request as s and returns its status, or nil when it failed in transport.
func (in *inspector) status(ctx context.Context, s *clients.Session, method, cursor string, body []byte) *int {
	rctx, cancel := context.WithTimeout(ctx, in.o.Timeout)
	defer cancel()
	if method == http.MethodGet {
		rs := in.openStream(ctx, s, cursor)
		if rs == nil {
			return nil
		}
		rs.close()
		return ptr(rs.status)
	}
	resp, err := s.Do(rctx, method, cursor, body)
	if err != nil {
		if ctx.Err() == nil {
			in.note("%s failed: %v", method, err)
		}
		return nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return ptr(resp.StatusCode)
}

// watchKeepalive holds a GET stream of a session of its own, idle, and times what arrives.
func (in *inspector) watchKeepalive(ctx context.Context, s *clients.Session) {
	in.fp.KeepaliveWatchedMS = in.o.Idle.Milliseconds()
	rs := in.openStream(ctx, s, "")
	if rs == nil {
		return
	}
	defer rs.close()
	if rs.status != http.StatusOK {
		in.fp.KeepaliveWatchedMS = 0
		return
	}
	if gap, ok := rs.keepalive(in.o.Idle); ok {
		in.fp.StreamKeepaliveMS = ptr(gap.Milliseconds())
	}
}

// describe says what an initialize or call got.
func describe(rep *clients.Reply, err error) string {
	switch {
	case err != nil && rep != nil && rep.Status != 0:
		return fmt.Sprintf("HTTP %d: %v", rep.Status, err)
	case err != nil:
		return err.Error()
	case rep == nil:
		return "no answer"
	case rep.RPCError != nil:
		return fmt.Sprintf("HTTP %d, JSON-RPC error %d: %s", rep.Status, rep.RPCError.Code, rep.RPCError.Message)
	default:
		return fmt.Sprintf("HTTP %d %s", rep.Status, rep.Body)
	}
}

func ping(id int) []byte { return call("ping", id) }

func call(method string, id int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method)
}

// eventIDs reads an SSE reply (if it is one) for up to its end, and returns the event ids.
func eventIDs(resp *http.Response, maxEvent, _ int) []string {
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	var ids []string
	last := ""
	for ev, err := range clients.ReadEvents(resp.Body, maxEvent) {
		if err != nil {
			break
		}
		if ev.Cursor != "" && ev.Cursor != last {
			ids = append(ids, ev.Cursor)
			last = ev.Cursor
		}
	}
	return ids
}

func redact(c clients.Conn) string {
	u := *c.URL
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	return u.String()
}
