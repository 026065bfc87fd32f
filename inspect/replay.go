package inspect

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"
)

// cursorsPerTrial bounds how many cursors of a trail one replay trial tries: the first to
// arrive and the least as a string cover both orders stores replay in (trail.cursors).
const cursorsPerTrial = 2

// replayTrial is what GETs with a dead session's cursors got.
type replayTrial struct {
	status *int  // the status of the decisive GET (or the last one), nil when none got one
	lies   *bool // the verdict; nil when it could not tell
	events int   // the dead session's events that came back
}

// replayDead resumes the dead session s's trail with its own id: does the server answer a
// dead session's resume with 200 (the seed's trap)? plainGet is what a GET without a cursor
// got on the same dead session. A refusal is "no"; a 200 is "yes" when it delivered events of
// the trail, or when the same session's GET without a cursor is refused (the cursor alone won
// the 200); a 200 otherwise, a 405 or no answer leave it unknown.
func (in *inspector) replayDead(ctx context.Context, s *wire.Session, t *trail, plainGet *int) replayTrial {
	var out replayTrial
	for _, c := range t.cursors(cursorsPerTrial) {
		st, got, ok := in.replayFrom(ctx, s, t, c)
		if !ok {
			continue
		}
		out.status = ptr(st)
		switch {
		case st == http.StatusMethodNotAllowed:
			return out
		case st != http.StatusOK:
			out.lies = ptr(false)
			return out
		case len(got) > 0:
			out.lies, out.events = ptr(true), len(got)
			return out
		case plainGet != nil && *plainGet != http.StatusOK:
			out.lies = ptr(true)
			return out
		}
	}
	if isTrue(out.lies) || out.status == nil {
		return out
	}
	in.note("the dead session's GET answers 200 with or without a cursor, and none of its events came back: whether it replays is unknown")
	return out
}

// crossTries bounds the live sessions crossSession opens: one that dies of its TTL during the
// trial (a loaded machine or server) leaves the answer unknown, and a fresh one may tell.
const crossTries = 2

// crossSession resumes a dead session's trail as a fresh live session: does the server hand
// one session's events to another? A refusal is "no"; "yes" needs the dead session's own
// events; a 200 that delivers none of them is unknown, never "no".
func (in *inspector) crossSession(ctx context.Context, t *trail) {
	for range crossTries {
		if !in.crossTrial(ctx, t) || ctx.Err() != nil {
			return
		}
	}
	in.note("cross-session replay: the live session died during the trial, %d times (the TTL is short): unknown", crossTries)
}

// crossTrial is one trial of crossSession, on a live session of its own; died says that
// session died during it, which tells nothing.
func (in *inspector) crossTrial(ctx context.Context, t *trail) (died bool) {
	d, err := in.open(ctx)
	if err != nil {
		in.note("cross-session replay: %v", err)
		return false
	}
	defer d.Delete(ctx)
	defer in.keepSessionAlive(ctx, d)() // a GET may not count as activity
	empty := false
	for _, c := range t.cursors(cursorsPerTrial) {
		// The live session must be live when it asks; tell its death from a refusal.
		if _, alive := in.ping(ctx, d); !isTrue(alive) {
			return true
		}
		st, got, ok := in.replayFrom(ctx, d, t, c)
		switch {
		case !ok:
		case st == http.StatusMethodNotAllowed:
			return false
		case st != http.StatusOK:
			if _, alive := in.ping(ctx, d); !isTrue(alive) {
				return true
			}
			in.fp.CrossSessionReplay = ptr(false)
			return false
		case len(got) > 0:
			in.fp.CrossSessionReplay = ptr(true)
			return false
		default:
			empty = true
		}
	}
	if empty {
		in.note("cross-session replay: a live session's GET with the dead session's cursor answered 200 but delivered none of the dead session's events: unknown")
	}
	return false
}

// replayWait bounds the wait for a replay's events; it ends early once all came or the stream
// ended, so only a replay that delivers nothing known waits it out.
func (in *inspector) replayWait() time.Duration { return min(in.o.Timeout, 2*time.Second) }

// replayFrom sends a GET with cursor c as s and returns its status and the events of t other
// than c that it delivered, in whatever order (waiting until all came, the stream ended, or
// replayWait passed). ok is false when the GET got no usable answer (transport failure, or a
// 200 that is not a stream: noted).
func (in *inspector) replayFrom(ctx context.Context, s *wire.Session, t *trail, c string) (int, []string, bool) {
	rs := in.openStream(ctx, s, c)
	if rs == nil || rs.garbage != "" {
		return 0, nil, false
	}
	if rs.status != http.StatusOK {
		return rs.status, nil, true
	}
	want := t.others(c)
	var got []string
	rs.dataIDs(in.replayWait(), func(ids []string) bool {
		got = got[:0]
		for _, id := range ids {
			if slices.Contains(want, id) {
				got = append(got, id)
			}
		}
		return len(got) == len(want)
	})
	return rs.status, got, true
}
