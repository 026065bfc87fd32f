package faults

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/mcpchaos/mcpchaos/internal/servertime"
)

// Toxiproxy changes a proxy's toxics by pausing every connection's toxic chain: it interrupts
// each toxic and waits until it has returned, and a toxic blocked handing a chunk to a client
// that does not read (a client busy with a 64 MiB event, or one that has closed its end while
// Toxiproxy still writes to it) never returns. The schedule then waits on the chain a hostile
// stream stalled (issue 20: faults abandoned, "a connection's toxic chain could not be paused").
//
// Shield keeps Toxiproxy's writer off that path: a relay on loopback stands in front of each
// proxy. Between Toxiproxy's calls it passes the client's pace on (it stops reading once
// pressureMark bytes wait for the client, as a plain TCP path would), and for the length of
// each call it reads whatever Toxiproxy sends at once, queueing up to ShieldBuffer bytes per
// connection for the client: a client that lets the queue fill then, or goes away, is cut by
// the relay itself (its connection closed, Toxiproxy's told the client is done), and the relay
// keeps reading and discarding what Toxiproxy still sends, so no toxic ever waits on it.
// Passing the pace on matters: a relay that read everything at once moved a hostile server's
// hundreds of megabytes a second into a queue, and cut any client that fell 1 MiB behind,
// mcpchaos's own clients included (reading an event over the cap to learn its size: issue 20).
//
// A "down" fault is the relay's alone: it closes its listener, so that a client finds the
// port refusing connections, and ends every connection as a cut does, Toxiproxy's side told
// the client is done and read to its end. Toxiproxy's own way (stopping the proxy) closed its
// connections under its toxic chains: a chain whose writer fails stops with a chunk in hand,
// and until its link is gone (which needs the lock the next change holds) that change waits
// on it for ever (the schedule's call abandoned: "adding fault slow2" after a restart, seen
// under load); a chain that ends by its reader's end of input closes stage by stage instead.
// A reset (reset_peer) is passed on as a reset.
//
// The other direction has the same trap: Toxiproxy's upstream chain writes what clients send
// to the server, and a server that stops reading (a stalled upload: it never reads a request
// body) blocks that writer just the same. So where Toxiproxy runs on this machine (embedded,
// or a toxiproxy-server on loopback: only then can it reach a relay of ours), a second relay
// stands between Toxiproxy and the server, passing the server's pace on between calls and
// reading what Toxiproxy sends at once during them, queueing up to ShieldBuffer bytes for the
// server; a server that lets it fill then is cut (its connection closed, Toxiproxy's side told
// the server is done, and read to its end). HTTP clients do not half-close, so an end of what
// Toxiproxy sends ends the server's connection once its queue is written.
//
// Since every end Toxiproxy reads comes from a relay, the relays also keep connections' ends
// out of Toxiproxy's changes, which a connection ending in the middle of one can crash
// (shield_teardown.go).
//
// Where Toxiproxy is embedded, both relays are one and no socket stands between it and
// Toxiproxy: the relay runs Toxiproxy's chains itself and feeds them the client's and the
// server's connections in process (shield_chains.go), so a held connection costs two sockets,
// not six and two splice pipes.

// ShieldBuffer bounds what a relay holds for one client that is not reading.
const ShieldBuffer = 1 << 20

// pressureMark is how much a relay queues for a client before it stops reading from Toxiproxy
// (between calls); the rest of ShieldBuffer is room for what a call makes Toxiproxy hand on
// (a toxic's chunk in hand, a removed toxic's buffer) before the client is cut.
const pressureMark = ShieldBuffer / 4

// Shielded is an Injector whose proxies sit behind relays (see Shield).
type Shielded struct {
	Injector
	mu      sync.Mutex
	relays  map[string]*relay // in front of each proxy, for its clients
	servers map[string]*relay // between each proxy and its server, when Toxiproxy is local
	cuts    atomic.Int64
}

// Shield wraps inj so that no client can stall its proxies' toxic chains.
func Shield(inj Injector) *Shielded {
	return &Shielded{Injector: inj, relays: map[string]*relay{}, servers: map[string]*relay{}}
}

// local says whether inj's Toxiproxy runs on this machine's loopback, where it can reach a
// relay of ours: embedded, or a toxiproxy-server whose API is on loopback.
func local(inj Injector) bool {
	switch i := inj.(type) {
	case *Embedded:
		return true
	case *External:
		u, err := url.Parse(i.api)
		if err != nil {
			return false
		}
		ip := net.ParseIP(u.Hostname())
		return u.Hostname() == "localhost" || ip != nil && ip.IsLoopback()
	}
	return false
}

// Unwrap is the injector behind the relays.
func (s *Shielded) Unwrap() Injector { return s.Injector }

// Unshield is inj without its relays, if it has them.
func Unshield(inj Injector) Injector {
	if s, ok := inj.(*Shielded); ok {
		return s.Injector
	}
	return inj
}

// Cuts is how many client connections the relays cut for not reading.
func (s *Shielded) Cuts() int64 { return s.cuts.Load() }

// AddProxy implements Injector: the proxy, then a relay in front of it, whose address is the
// one clients are given.
func (s *Shielded) AddProxy(ctx context.Context, name, upstream string) (string, error) {
	if e, ok := s.Injector.(*Embedded); ok {
		return s.addChains(ctx, e, name, upstream)
	}
	gate := newTeardowns(local(s.Injector))
	if gate.paired {
		resets := new(resetNotes)
		sr := &relay{name: name, inner: upstream, server: true, conns: map[relayed]bool{}, cuts: &s.cuts, resets: resets, gate: gate}
		if err := sr.listen("127.0.0.1:0"); err != nil {
			return "", fmt.Errorf("faults: proxy %s: server relay: %w", name, err)
		}
		s.mu.Lock()
		s.servers[name] = sr
		s.mu.Unlock()
		upstream = sr.addr
	}
	inner, err := s.Injector.AddProxy(ctx, name, upstream)
	if err != nil {
		return "", err
	}
	r := &relay{name: name, inner: inner, conns: map[relayed]bool{}, cuts: &s.cuts, gate: gate}
	s.mu.Lock()
	if sr := s.servers[name]; sr != nil {
		r.resets = sr.resets
	}
	s.mu.Unlock()
	if err := r.listen("127.0.0.1:0"); err != nil {
		return "", fmt.Errorf("faults: proxy %s: relay: %w", name, err)
	}
	s.mu.Lock()
	s.relays[name] = r
	s.mu.Unlock()
	return r.addr, nil
}

// addChains puts a relay in front of embedded Toxiproxy's chains for proxy name, fed by the
// relay itself (shield_chains.go).
func (s *Shielded) addChains(ctx context.Context, e *Embedded, name, upstream string) (string, error) {
	ch, err := e.chains(ctx, name, upstream)
	if err != nil {
		return "", err
	}
	r := &relay{name: name, inner: upstream, conns: map[relayed]bool{}, cuts: &s.cuts, gate: newTeardowns(true), chains: ch}
	if err := r.listen("127.0.0.1:0"); err != nil {
		return "", fmt.Errorf("faults: proxy %s: relay: %w", name, err)
	}
	s.mu.Lock()
	s.relays[name] = r
	s.mu.Unlock()
	return r.addr, nil
}

// AddToxic implements Injector. A "down" fault is the relay's alone (see Shield); any other
// is Toxiproxy's, added while the proxy's relays read at once (see during).
func (s *Shielded) AddToxic(ctx context.Context, proxy string, t Toxic) error {
	if r := s.relay(proxy); r != nil && t.Type == TypeDown {
		if _, err := t.check(ctx, proxy); err != nil {
			return err
		}
		return r.setDown(t.Name)
	}
	if t.Type == TypeHalfOpen {
		return s.addHalfOpen(ctx, proxy, t)
	}
	return s.during(ctx, proxy, true, func() error { return s.Injector.AddToxic(ctx, proxy, t) })
}

// RemoveToxic implements Injector; ending a "down" fault listens again on the relay's address.
func (s *Shielded) RemoveToxic(ctx context.Context, proxy, name string) error {
	if r := s.relay(proxy); r != nil && r.isDown(name) {
		if err := r.listen(r.addr); err != nil {
			return fmt.Errorf("faults: proxy %s: end fault %s: relay: listen again on %s: %w", proxy, name, r.addr, err)
		}
		return nil
	}
	if r := s.relay(proxy); r != nil && r.endHalfOpen(name) {
		return nil
	}
	return s.during(ctx, proxy, false, func() error { return s.Injector.RemoveToxic(ctx, proxy, name) })
}

// during runs call (a change of proxy's toxics, which pauses its chains) with the proxy's
// relays reading at once, so that no chain waits on a client's (or a server's) pace, and with
// no connection ending inside Toxiproxy (see teardowns); add says whether call adds a toxic.
func (s *Shielded) during(ctx context.Context, proxy string, add bool, call func() error) error {
	s.mu.Lock()
	rs := []*relay{s.relays[proxy], s.servers[proxy]}
	s.mu.Unlock()
	for _, r := range rs {
		if r != nil {
			r.drain(1)
		}
	}
	defer func() {
		for _, r := range rs {
			if r != nil {
				r.drain(-1)
			}
		}
	}()
	if rs[0] != nil {
		g := rs[0].gate
		g.begin(ctx, add)
		defer g.end()
	}
	return call()
}

// Close implements Injector: the relays, then the proxies.
func (s *Shielded) Close() error {
	s.mu.Lock()
	relays, servers := s.relays, s.servers
	s.relays, s.servers = map[string]*relay{}, map[string]*relay{}
	s.mu.Unlock()
	for _, r := range relays {
		r.close()
	}
	err := s.Injector.Close()
	for _, r := range servers {
		r.close()
	}
	return err
}

// Stalled names the connections of proxy whose clients (or whose server) are not reading what
// they are sent, for an error that must say what holds Toxiproxy.
func (s *Shielded) Stalled(proxy string) []string {
	var out []string
	if r := s.relay(proxy); r != nil {
		out = r.stalled()
	}
	s.mu.Lock()
	sr := s.servers[proxy]
	s.mu.Unlock()
	if sr != nil {
		out = append(out, sr.stalled()...)
	}
	return out
}

// MeterServer times the server's replies to proxy's connections by the kernel's clock, on the
// relay's connection to the server (between Toxiproxy and the server, or, with Toxiproxy
// embedded, the server's side of the chains the relay feeds) (see package servertime): the time from a request's
// last byte written to the reply's first byte arriving, which neither this process's stalls
// nor Toxiproxy's move. Call it before clients connect. It reports false when proxy has no
// server relay (Toxiproxy is not on this machine) or the system cannot stamp (not Linux).
func (s *Shielded) MeterServer(proxy string, m *servertime.Meter) bool {
	s.mu.Lock()
	r := s.servers[proxy] // the relay between a toxiproxy-server and the server
	if r == nil && s.relays[proxy] != nil && s.relays[proxy].chains != nil {
		r = s.relays[proxy] // embedded Toxiproxy: the relay holds the server's connection itself
	}
	s.mu.Unlock()
	if r == nil || !servertime.Supported {
		return false
	}
	r.meter.Store(m)
	return true
}

func (s *Shielded) relay(name string) *relay {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.relays[name]
}
