package fleet

import (
	"github.com/mcpchaos/mcpchaos/clients/fleet/drive"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// The reverse misattribution (docs/metrics.md, live_sessions_declared_dead): a client abandons
// as dead a session the server still had alive, because a dead status (404 by default) came
// back for something else than its death: an event store that evicted the resume's cursor
// and has no other answer than "not found", a router that asked the wrong replica. Where the
// run knows each death exactly (the reference server), a session abandoned on a dead status
// and not dead by the server's record is counted. Elsewhere only the resume's case is judged,
// by one follow-up request on the old id (judgeAbandonedResume); a library group's case there
// is not observable.

// declaredLive counts h once as a live session the client declared dead.
func (c *Client) declaredLive(h *drive.Held) {
	if h.Marks.Declared.CompareAndSwap(false, true) {
		c.f.rec.Inc(metrics.LiveSessionsDeclaredDead)
	}
}

// exactDeaths says whether the group's deaths are the server's record (the reference
// server), not an estimate learnt from the traffic.
func (f *Fleet) exactDeaths() bool {
	_, learns := f.truth.(truth.Learner)
	return !learns
}

// JudgeAbandonedResume asks a target whose deaths the run can only estimate whether the
// session h, whose resume it answered with a dead status and which the client is about to
// abandon, was alive: one ping with h's id, the tool's request, not the client's (no metric of
// the client counts it). A success shows the server still had the session; any other answer
// shows nothing, and nothing is counted. On a server that serves any id a success proves
// nothing either: the run withholds the counter there (engine).
func (c *Client) JudgeAbandonedResume(h *drive.Held) {
	if c.f.exactDeaths() || h.Ctx.Err() != nil {
		return
	}
	if rep, err := h.S.Ping(h.Ctx); err == nil && rep.OK() {
		c.declaredLive(h)
	}
}

// JudgeLibraryEnded counts a library that ended h by itself after the server answered one of
// its requests with a dead status while, by the server's record, h was alive.
func (c *Client) JudgeLibraryEnded(h *drive.Held, deadStatus bool) {
	if c.f.exactDeaths() && deadStatus && !c.DeadNow(h) {
		c.declaredLive(h)
	}
}
