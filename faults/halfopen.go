package faults

// half_open, the zombie stream: a proxy in front of a server loses the client's side of a
// standalone GET stream while the server's side stays open. The client sees its stream reset
// and reconnects; the server, which never saw the stream end, still holds it and refuses the
// reconnect (409 from the TS and Go SDK servers, 400 "session already exists" from a hosting
// platform) until its side finally closes. Toxiproxy cannot leave one side of a connection
// open, so the fault is the relay's alone, and only where the relay feeds Toxiproxy's chains
// itself (embedded Toxiproxy, shield_chains.go): it holds both sockets there.
//
// When the fault starts, every connection of the proxy whose last request was a GET (the
// relay reads the request line of what the client sends) has its client's socket reset
// (SO_LINGER 0 and close: ECONNRESET) and its end passed through the chains as any end is;
// the server's socket is then neither read nor closed but held for hold, or until the proxy
// closes at the end of the run, whichever comes first. Connections opened later, reconnects
// included, are not touched: the fault acts once, at its start, as a proxy that lost its state.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"time"

	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// TypeHalfOpen is the zombie stream (see above).
const TypeHalfOpen = vocab.ToxicHalfOpen

// halfOpens is a relay's state for half_open: the faults in force and the server sockets held.
type halfOpens struct {
	names map[string]bool
	held  map[*net.TCPConn]*time.Timer
	count int64 // streams half-opened
}

// addHalfOpen starts half_open fault t on proxy's relay (see above).
func (s *Shielded) addHalfOpen(ctx context.Context, proxy string, t Toxic) error {
	if _, err := t.check(ctx, proxy); err != nil {
		return err
	}
	r := s.relay(proxy)
	if r == nil || r.chains == nil {
		return fmt.Errorf("faults: proxy %s: fault %s: half_open needs the embedded fault proxy, which holds both sockets of a connection; a toxiproxy-server cannot leave one side open: run without --toxiproxy", proxy, t.Name)
	}
	hold := time.Duration(vocab.HalfOpenHold) * time.Millisecond
	if v, ok := integral(t.Attributes["hold"]); ok {
		hold = time.Duration(v) * time.Millisecond
	}
	return r.halfOpen(t.Name, hold)
}

// HalfOpened is how many GET streams half_open faults reset on proxy's client side.
func (s *Shielded) HalfOpened(proxy string) int64 {
	r := s.relay(proxy)
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ho.count
}

func (r *relay) halfOpen(name string, hold time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ho.names[name] {
		return fmt.Errorf("faults: proxy %s: fault %s: already in force", r.name, name)
	}
	if r.ho.names == nil {
		r.ho.names, r.ho.held = map[string]bool{}, map[*net.TCPConn]*time.Timer{}
	}
	r.ho.names[name] = true
	for rc := range r.conns {
		if c, ok := rc.(*chainConn); ok && c.client.lastGET.Load() {
			c.halfOpen(hold)
			r.ho.count++
		}
	}
	return nil
}

// isHalfOpen says whether name is a half_open fault in force; removing it forgets it (the
// connections it reset stay as they are: their server sockets close when their hold ends).
func (r *relay) endHalfOpen(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.ho.names[name] {
		return false
	}
	delete(r.ho.names, name)
	return true
}

// halfOpen resets the client's socket and marks the server's to be held once its chain ends.
func (c *chainConn) halfOpen(hold time.Duration) {
	c.server.mu.Lock()
	c.server.holdFor = hold
	c.server.mu.Unlock()
	c.client.cutOnce.Do(func() {
		c.client.conn.SetLinger(0) // close sends RST: the client reads ECONNRESET
		c.client.stop()
	})
}

// hold keeps the server's socket conn open for d (the relay's lock is not held), then closes
// it; the relay's close closes it sooner.
func (r *relay) hold(conn *net.TCPConn, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		conn.Close()
		return
	}
	r.ho.held[conn] = time.AfterFunc(d, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, ok := r.ho.held[conn]; ok {
			delete(r.ho.held, conn)
			conn.Close()
		}
	})
}

// closeHeld closes every held server socket at once (the relay's lock held).
func (r *relay) closeHeld() {
	for conn, t := range r.ho.held {
		t.Stop()
		conn.Close()
	}
	clear(r.ho.held)
}

// Held is how many server sockets proxy's relay holds open for half_open faults.
func (s *Shielded) Held(proxy string) int {
	r := s.relay(proxy)
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ho.held)
}

var methods = [][]byte{[]byte("POST "), []byte("DELETE "), []byte("PUT "), []byte("HEAD "), []byte("OPTIONS "), []byte("PATCH ")}

// noteRequest notes whether the client's latest request, whose bytes may begin in b, is a GET:
// HTTP clients do not pipeline, so a chunk beginning with a method is a request's start (a
// body beginning so is not told apart; MCP bodies are JSON).
func (s *side) noteRequest(b []byte) {
	if bytes.HasPrefix(b, []byte("GET ")) {
		s.lastGET.Store(true)
		return
	}
	for _, m := range methods {
		if bytes.HasPrefix(b, m) {
			s.lastGET.Store(false)
			return
		}
	}
}
