package faults

import (
	"context"
	"sync"
	"time"
)

// A connection's end must not reach Toxiproxy while it changes the proxy's toxics. Toxiproxy
// (v2.12.0) removes a toxic from each connection's chain by interrupting its stage and splicing
// it out; a connection whose end arrives in the middle (its stage has closed, or the end comes
// through while the stage's buffer is flushed) is left with its old stages, and while the end
// is still working its way down the chain, the next change takes the chain's last stage for a
// live one and indexes past the end of the proxy's chain: `panic: index out of range [2] with
// length 2` in ToxicLink.AddToxic, on a goroutine of Toxiproxy's, which ends the process
// (TestShieldChurnKeepsToxiproxysChainsWhole: clients that read a little and go, against a
// stream of changes, crash it within a few thousand changes without this). The panic is
// Toxiproxy's, in its own goroutine: no recover of ours can catch it.
//
// Every end that Toxiproxy reads comes from a relay of ours (a client's or a server's end, a
// cut, a "down" fault, the end of what Toxiproxy sent), so a proxy's two relays share a
// teardowns that (1) holds an end back while a change is under way, passing it once the change
// is over, and (2) has an addition that follows a removal made while a connection was on its
// way out wait, before it begins, for the ends already passed to be seen through (see begin):
// Toxiproxy's chains for both directions of that connection have ended, which the
// relays see as Toxiproxy ending what it sends them. A chain that has ended has closed every
// stage, and no change can take any of them for a live one. Only Toxiproxy's own ends (a
// toxic that closes a connection: idle_timeout, reset_peer, timeout) are outside this.
//
// The wait is bounded by teardownWait: an end that must come through a latency toxic takes
// as long as the latency, and a fault should not wait longer than a second for it. Where Toxiproxy is not on
// this machine there is no server relay, and only the clients' side is seen.
type teardowns struct {
	mu     sync.Mutex
	paired bool // the proxy has a server relay: each of Toxiproxy's connections has a conn in each
	calls  int  // changes under way: ends are held back
	// waiting counts the changes still waiting for ends to be seen through; meanwhile only
	// the ends of connections already on their way out pass (they are what is waited for).
	waiting int
	// stale: a removal was made while a connection was on its way out, and none has been
	// waited for since
	stale bool
	held  []heldEnd
	conns map[*ends]bool // sides whose ends are not yet both passed and seen
	// changed is closed (and replaced) whenever a conn's state changes, for a waiting change.
	changed chan struct{}
	// waits counts the changes that waited for an end to be seen through; late counts those
	// that gave up after teardownWait (for tests).
	waits, late int
}

// ends is what the teardowns know of one of Toxiproxy's sockets: a relay's socket to it, or, where
// Toxiproxy's chains run in this process, one side of a connection (shield_chains.go). Its
// fields are guarded by the teardowns' mu.
type ends struct {
	server bool // the server's side: Toxiproxy reads what the server sends through it
	// passed: an end of ours went to Toxiproxy on it; seen: Toxiproxy ended what it sends on it
	passed, seen bool
}

type heldEnd struct {
	rc  *ends
	end func()
}

// teardownWait bounds how long a change waits for the ends already passed to Toxiproxy.
const teardownWait = time.Second

func newTeardowns(paired bool) *teardowns {
	return &teardowns{paired: paired, conns: map[*ends]bool{}, changed: make(chan struct{})}
}

// signal wakes a waiting change; the caller holds mu.
func (g *teardowns) signal() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// open counts rc in: a connection of Toxiproxy's that has not ended.
func (g *teardowns) open(rc *ends) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.conns[rc] = true
	g.signal()
}

// pass ends Toxiproxy's input on rc's socket (end does it), now or, while a change is under
// way, once it is over; while a change waits, a connection already on its way out goes on.
func (g *teardowns) pass(rc *ends, end func()) {
	g.mu.Lock()
	if g.calls > 0 && !(g.waiting > 0 && (rc.passed || rc.seen)) {
		g.held = append(g.held, heldEnd{rc, end})
		g.mu.Unlock()
		return
	}
	g.passed(rc)
	g.mu.Unlock()
	end()
}

// passed records that rc's end went to Toxiproxy; the caller holds mu.
func (g *teardowns) passed(rc *ends) {
	rc.passed = true
	g.settle(rc)
}

// seen records that Toxiproxy ended what it sends on rc's socket: the chain that writes to it
// has closed every stage.
func (g *teardowns) seen(rc *ends) {
	g.mu.Lock()
	defer g.mu.Unlock()
	rc.seen = true
	g.settle(rc)
}

// gone records a conn that ends at once in both directions (a server relay's conn whose
// server could not be reached, or a relay closing).
func (g *teardowns) gone(rc *ends) {
	g.mu.Lock()
	defer g.mu.Unlock()
	rc.passed, rc.seen = true, true
	g.settle(rc)
}

func (g *teardowns) settle(rc *ends) {
	if rc.passed && rc.seen {
		delete(g.conns, rc)
	}
	g.signal()
}

// quiet says whether no connection is on its way out: none has an end passed or seen without
// the other, and (paired) the server's side has no connection more than the clients' side,
// which is a connection whose chain Toxiproxy itself ended (a toxic that closes), seen on the
// clients' side and ended there, on its way out on the server's. The clients' side may have
// more: connections that Toxiproxy has not yet taken up (its accept loop waits for its lock
// while a change is under way). The caller holds mu.
func (g *teardowns) quiet() bool {
	front, server := 0, 0
	for rc := range g.conns {
		switch {
		case rc.passed || rc.seen:
			return false
		case rc.server:
			server++
		default:
			front++
		}
	}
	return !g.paired || server <= front
}

// begin starts a change: ends are held back from now on. A removal made while connections
// were on their way out may leave them with stale stages (see teardowns), so an addition
// after it first waits for those to be seen through: until no connection is on its way out,
// teardownWait, or ctx's end. Only an addition indexes past a stale chain, and a connection
// that has ended is harmless however stale, so a removal need not wait, nor an addition
// after a removal made with none on its way out (the usual case: no wait at all).
func (g *teardowns) begin(ctx context.Context, add bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	if !add {
		g.stale = g.stale || !g.quiet()
		return
	}
	if !g.stale {
		return
	}
	g.waits++
	g.waiting++
	defer func() { g.waiting-- }()
	bound := time.NewTimer(teardownWait)
	defer bound.Stop()
	for !g.quiet() {
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
			g.mu.Lock()
		case <-bound.C:
			g.mu.Lock()
			g.late++
			return
		case <-ctx.Done():
			g.mu.Lock()
			return
		}
	}
	g.stale = false
}

// end ends a change; once none is under way, the ends held back are passed.
func (g *teardowns) end() {
	g.mu.Lock()
	g.calls--
	var held []heldEnd
	if g.calls == 0 {
		held, g.held = g.held, nil
		for _, h := range held {
			g.passed(h.rc)
		}
	}
	g.mu.Unlock()
	for _, h := range held {
		h.end()
	}
}
