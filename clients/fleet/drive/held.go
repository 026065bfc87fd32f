package drive

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/mcpchaos/mcpchaos/clients/wire"
)

var errListTools = errors.New("tools/list failed")

// Held is one session as a client holds it.
type Held struct {
	S      *wire.Session
	Ctx    context.Context // ends when the client abandons the session; ends its stream
	Cancel context.CancelFunc

	// Replaced: the client has initialized a newer session, so sending with this one is a
	// collision (reinit_collisions).
	Replaced atomic.Bool
	// Marks are the group's own counted-once flags of the session; drivers leave them alone.
	Marks Marks
}

// Marks say what the group's books have counted of a session, each once.
type Marks struct {
	RanInto  atomic.Bool // counted once in sessions_dead
	Settled  atomic.Bool // its false-healthy time is counted
	Sourced  atomic.Bool // its death counted once by how its time was obtained
	Declared atomic.Bool // counted once as a live session declared dead
	// RefusedSince: when its GET reconnects began to be refused as a stream already attached
	// (unix ns; 0: not refused), until one is accepted.
	RefusedSince atomic.Int64
}

// NewHeld holds s under a context of its own, derived from ctx.
func NewHeld(ctx context.Context, s *wire.Session) *Held {
	h := &Held{S: s}
	h.Ctx, h.Cancel = context.WithCancel(ctx)
	return h
}
