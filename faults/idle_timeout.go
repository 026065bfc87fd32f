package faults

import (
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

func init() {
	toxics.Register("idle_timeout", new(IdleTimeoutToxic))
}

// IdleTimeoutToxic closes a connection after Timeout milliseconds without
// data flowing in its direction, as a load balancer does with an idle
// connection. On the downstream direction (server → client) it is the drop an
// SSE stream suffers when the server sends nothing for longer than the load
// balancer's idle timeout.
//
// Closing its stub makes Toxiproxy close the connection's destination, which
// in turn ends the other direction, so both peers see the connection end: the
// client reads EOF on its stream and the server sees its side closed.
type IdleTimeoutToxic struct {
	// Timeout in milliseconds; must be positive.
	Timeout int64 `json:"timeout"`
}

// idleState is the per-connection idle clock. Toxiproxy interrupts and
// restarts a toxic whenever the proxy's toxic list changes; keeping the clock
// here means adding another fault does not give an idle connection a fresh
// timeout.
type idleState struct {
	last    time.Time           // when data last flowed, or when the toxic first ran
	expired bool                // the connection was closed for idleness
	held    *stream.StreamChunk // read but not yet passed on when an interrupt came
}

// NewState implements toxics.StatefulToxic.
func (t *IdleTimeoutToxic) NewState() interface{} {
	return new(idleState)
}

// Pipe implements toxics.Toxic.
func (t *IdleTimeoutToxic) Pipe(stub *toxics.ToxicStub) {
	state, ok := stub.State.(*idleState)
	if !ok { // Toxiproxy always sets the state; be safe if used bare.
		state = new(idleState)
		stub.State = state
	}
	if state.expired {
		drain(stub)
		return
	}
	timeout := time.Duration(t.Timeout) * time.Millisecond
	if state.last.IsZero() {
		state.last = time.Now()
	}
	idle := time.NewTimer(timeout - time.Since(state.last))
	defer idle.Stop()
	for {
		if state.held != nil {
			// Every send listens for Interrupt too: Toxiproxy pauses the chain (to add or
			// remove a toxic) by sending on Interrupt and waiting, and a peer that reads
			// nothing would otherwise hold that pause, and the whole fault schedule, forever
			// (upstream issues 427 and 558). The chunk stays held for the next Pipe.
			select {
			case <-stub.Interrupt:
				return
			case stub.Output <- state.held:
				state.held = nil
				state.last = time.Now()
				idle.Reset(timeout)
			}
		}
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			state.held = c
		case <-idle.C:
			state.expired = true
			stub.Close()
			drain(stub)
			return
		}
	}
}

// Cleanup implements toxics.CleanupToxic: when the toxic is removed, a chunk it still holds
// is passed on, with the bound Toxiproxy gives its own flush after a removal.
func (t *IdleTimeoutToxic) Cleanup(stub *toxics.ToxicStub) {
	if state, ok := stub.State.(*idleState); ok && state.held != nil && !state.expired {
		_ = stub.WriteOutput(state.held, flushBound)
		state.held = nil
	}
}

// flushBound is how long a removal waits to pass on a held chunk; Toxiproxy waits as long
// for the chunks it flushes itself after a removal.
const flushBound = 5 * time.Second

// drain discards what still arrives on a closed stub until its input ends.
// Without it the stages in front of the stub (down to the goroutine reading
// the peer's socket) would block forever on their next send and leak. It does
// not listen for interrupts: Toxiproxy does not interrupt a closed stub.
func drain(stub *toxics.ToxicStub) {
	for c := range stub.Input {
		if c == nil {
			return
		}
	}
}
