package drive

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Driver is how one kind of client holds its sessions and makes the application's calls. There
// is one per kind: the wire session and the stateless revision (package wiredriver), the client
// libraries (package libdriver). The group picks one when it is made; nothing else switches on
// the kind.
type Driver interface {
	// Hold initializes a session and holds it until it is abandoned, then starts over, until
	// ctx ends. It runs on a goroutine counted by wg and may hand on to others it counts there.
	Hold(ctx context.Context, c Client, wg *sync.WaitGroup)
	// Tick is one application request of request loop k: a tool call, with whatever retries
	// the kind makes.
	Tick(ctx context.Context, c Client, k int)
	// NotObservable lists the metrics this kind's numbers cannot speak for.
	NotObservable() []string
}

// Client is one simulated client's books as a driver sees them: its sessions (which one is
// current, which one each request loop sends with) and what is counted of them against the
// server's truth. The group implements it (fleet's *Client); a driver moves a client's state
// and counts only through it, so every kind is judged by the same books.
type Client interface {
	Index() int // the client's index in its group, from 0

	// Initialize opens a new wire session and makes it the client's current one.
	Initialize(ctx context.Context) (*Held, error)
	// Adopt makes a session a client library opened the client's current one, live.
	Adopt(h *Held)
	// Current is the client's current session (nil while it re-initializes) and whether the
	// client is live on it.
	Current() (h *Held, live bool)
	// Forget lets go of h without counting anything, if it is still the current session: the
	// run is over and h was settled and ended by its driver.
	Forget(h *Held)
	// Abandon ends the client's belief in h: h's context ends (and its stream with it), and the
	// client's holder opens a new session. detected: the client classified h dead (rather than
	// giving up on it after a surfaced failure); allLoops: every request loop moves to the next
	// session (otherwise each keeps h until its own failure).
	Abandon(h *Held, detected, allLoops bool)
	// Settle counts the time the client believed h alive after it had died.
	Settle(h *Held, now time.Time)
	// Restart starts a new session in a new goroutine counted by wg, unless the run is over.
	Restart(ctx context.Context, wg *sync.WaitGroup)
	// SetState moves the client to state s.
	SetState(s metrics.State)
	// SessionFor is the session request loop k sends with, nil when it should skip its turn.
	SessionFor(k int) *Held
	// DropLoopSession makes loop k forget h, and the client give it up if still current.
	DropLoopSession(k int, h *Held)

	// Account counts a request of h sent at sent and answered status (0: none) against the
	// session's death; retry says it re-sent a request.
	Account(h *Held, sent time.Time, status int, retry bool)
	// Apply counts n server events of h read on a stream opened at opened.
	Apply(h *Held, n int, opened time.Time)
	// Probe sends the group's liveness probe on h.
	Probe(h *Held) policy.ProbeResult
	// Answered counts a tool call sent at sent that got a result.
	Answered(ctx context.Context, rep *wire.Reply, sent time.Time)
	// DeadNow says whether h's session is dead by the server's truth now.
	DeadNow(h *Held) bool
	// StreamAnswered counts the status a GET stream of h got (0: none); resumed: it carried
	// a cursor.
	StreamAnswered(h *Held, status int, resumed bool)
	// JudgeAbandonedResume asks whether h, whose resume got a dead status, was alive.
	JudgeAbandonedResume(h *Held)
	// JudgeLibraryEnded counts a library that ended h by itself after a dead status for one
	// of its requests (deadStatus) while, by the server's record, h was alive.
	JudgeLibraryEnded(h *Held, deadStatus bool)
	// NoteAnswered marks, on the call's turn, that the call got its result at at (a library
	// call, which Answered does not count).
	NoteAnswered(ctx context.Context, at time.Time)
	// NotMade counts a turn that passed without a live session to call on.
	NotMade(ctx context.Context)

	// Arguments are the client's next call's arguments, learnt from list when the group gives
	// none.
	Arguments(ctx context.Context, list func(context.Context) (json.RawMessage, error)) (any, error)
	// CallTool sends the group's tool call on s, as logical call call (CallKey).
	CallTool(ctx context.Context, s *wire.Session, args any, call string) (*wire.Reply, error)
	// CallKey names a new logical call of the client.
	CallKey() string
	// ProgressToken is the next call's progress token, "" when the group sends none.
	ProgressToken() string
}

// Books are the group's books of failures, which every client of it counts into: error
// samples, refusals, surfaced failures. The group implements them (fleet's *Fleet).
type Books interface {
	// Failed counts an error of a request and keeps its text.
	Failed(err error)
	// CallFailed counts why a request got no result.
	CallFailed(rep *wire.Reply, err error, dead bool)
	// Surfaced counts a tool call surfaced to the application as a failure.
	Surfaced(rep *wire.Reply, err error, dead bool)
	// ArgsFailed counts a call that could not be made for want of arguments.
	ArgsFailed(err error)
	// RefusedCall counts a failed tool call the server refused (invalid params, say).
	RefusedCall()
	// Sample keeps a failure's text for the export.
	Sample(text string)
	// ProtocolError counts a message of the server that broke the protocol.
	ProtocolError(err error)
	// Refusal counts a session-scoped request answered with a status dead_statuses do not list.
	Refusal(status int)
	// Tool is the name of the tool the group calls.
	Tool() string
}

// ListTools is tools/list on a wire session, for Client.Arguments; a failure is counted in b.
func ListTools(b Books, s *wire.Session) func(context.Context) (json.RawMessage, error) {
	return func(ctx context.Context) (json.RawMessage, error) {
		rep, err := s.ListTools(ctx)
		if err != nil || !rep.OK() {
			b.CallFailed(rep, err, false)
			return nil, errListTools
		}
		return rep.Result, nil
	}
}
