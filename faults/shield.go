package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
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
	if local(s.Injector) {
		resets := new(resetNotes)
		sr := &relay{name: name, inner: upstream, server: true, conns: map[*relayConn]bool{}, cuts: &s.cuts, resets: resets}
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
	r := &relay{name: name, inner: inner, conns: map[*relayConn]bool{}, cuts: &s.cuts}
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

// AddToxic implements Injector. A "down" fault is the relay's alone (see Shield); any other
// is Toxiproxy's, added while the proxy's relays read at once (see during).
func (s *Shielded) AddToxic(ctx context.Context, proxy string, t Toxic) error {
	if r := s.relay(proxy); r != nil && t.Type == TypeDown {
		if _, err := t.check(ctx, proxy); err != nil {
			return err
		}
		return r.setDown(t.Name)
	}
	return s.during(proxy, func() error { return s.Injector.AddToxic(ctx, proxy, t) })
}

// RemoveToxic implements Injector; ending a "down" fault listens again on the relay's address.
func (s *Shielded) RemoveToxic(ctx context.Context, proxy, name string) error {
	if r := s.relay(proxy); r != nil && r.isDown(name) {
		if err := r.listen(r.addr); err != nil {
			return fmt.Errorf("faults: proxy %s: end fault %s: relay: listen again on %s: %w", proxy, name, r.addr, err)
		}
		return nil
	}
	return s.during(proxy, func() error { return s.Injector.RemoveToxic(ctx, proxy, name) })
}

// during runs call (a change of proxy's toxics, which pauses its chains) with the proxy's
// relays reading at once, so that no chain waits on a client's (or a server's) pace.
func (s *Shielded) during(proxy string, call func() error) error {
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

func (s *Shielded) relay(name string) *relay {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.relays[name]
}

// relay is one listener and its connections: in front of a proxy (inner is the proxy; the
// client is the side that may not read) or, with server, between a proxy and its server
// (inner is the server, the side that may not read).
type relay struct {
	name, inner string
	server      bool
	cuts        *atomic.Int64
	resets      *resetNotes // shared by a proxy's two relays; nil without a server relay

	draining atomic.Int32 // Toxiproxy calls under way on the proxy: read at once (see during)

	mu     sync.Mutex
	addr   string
	ln     net.Listener
	down   string
	closed bool
	conns  map[*relayConn]bool
	recent []string // the last connections cut, for an error that must say what stalled
}

// drain counts a call of Toxiproxy's in (+1) or out (-1); a call's start wakes every reader
// waiting for its client to take what it queued.
func (r *relay) drain(delta int32) {
	if r.draining.Add(delta) > 0 && delta > 0 {
		r.mu.Lock()
		defer r.mu.Unlock()
		for rc := range r.conns {
			rc.wake()
		}
	}
}

func (r *relay) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		ln.Close()
		return ErrClosed
	}
	r.ln, r.addr, r.down = ln, ln.Addr().String(), ""
	r.mu.Unlock()
	go r.accept(ln)
	return nil
}

func (r *relay) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go r.serve(c.(*net.TCPConn))
	}
}

// setDown closes the listener and ends every connection as a cut does (see Shield).
func (r *relay) setDown(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down != "" {
		return fmt.Errorf("faults: proxy %s: fault %s: proxy already down by fault %s", r.name, name, r.down)
	}
	r.down = name
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for rc := range r.conns {
		rc.end()
	}
	return nil
}

func (r *relay) isDown(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.down != "" && r.down == name
}

func (r *relay) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.ln != nil {
		r.ln.Close()
	}
	for rc := range r.conns {
		rc.closeBoth()
	}
}

func (r *relay) stalled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for rc := range r.conns {
		if q := rc.queued.Load(); q > 0 {
			out = append(out, fmt.Sprintf("%s (%s, %d bytes unread)", rc.dst.RemoteAddr(), r.what(), q))
		}
	}
	return append(out, r.recent...)
}

// noteCut remembers that the client at addr was cut, and why.
func (r *relay) noteCut(addr net.Addr, why string) {
	r.cuts.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recent = append(r.recent, fmt.Sprintf("%s (%s, cut: %s)", addr, r.what(), why))
	if len(r.recent) > 8 {
		r.recent = r.recent[len(r.recent)-8:]
	}
}

// what names the relay's side in a message.
func (r *relay) what() string {
	if r.server {
		return "proxy " + r.name + "'s server"
	}
	return "proxy " + r.name
}

// relayConn is one connection through a relay: src is read at once and its bytes queued for
// dst, the side that may not read (a client, or a server); dst's bytes are copied to src as
// they come.
type relayConn struct {
	r        *relay
	src, dst *net.TCPConn
	queue    chan []byte
	queued   atomic.Int64
	cutOnce  sync.Once
	cut      atomic.Bool
	room     chan struct{} // a token when the queue shrank, a drain began or the connection ended
	// resetAfter: dst is reset once its queue is written, not closed (set by read before it
	// closes the queue, read by write after the queue is closed)
	resetAfter bool
}

func (r *relay) serve(accepted *net.TCPConn) {
	d := net.Dialer{Timeout: 5 * time.Second}
	dc, err := d.Dial("tcp", r.inner)
	if err != nil {
		accepted.SetLinger(0)
		accepted.Close()
		return
	}
	rc := &relayConn{r: r, src: dc.(*net.TCPConn), dst: accepted, queue: make(chan []byte, 256), room: make(chan struct{}, 1)}
	if r.server {
		rc.src, rc.dst = accepted, dc.(*net.TCPConn)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		rc.closeBoth()
		return
	}
	if r.ln == nil { // down since it was accepted: Toxiproxy's side is ended gracefully too
		rc.end()
	}
	r.conns[rc] = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.conns, rc)
		r.mu.Unlock()
	}()
	go rc.back()
	go rc.write()
	rc.read()
}

// back copies what dst sends to src; dst's end of sending is passed on. A server that broke
// its connection (a reset) ends what Toxiproxy reads from us too (left open, the client would
// wait for the rest of the response until its own timeout), by an ordinary end, never by
// closing or resetting src: Toxiproxy's writer to src would then fail and stop, and a toxic
// chain whose writer has stopped can never be paused again. read goes on reading src to its
// end. The reset is noted for the proxy's client relay, since Toxiproxy ends the client's
// connection with an ordinary close (see resetNotes). A client's broken connection is found
// by write, which cuts it.
func (rc *relayConn) back() {
	_, err := io.Copy(rc.src, rc.dst)
	switch {
	case err == nil:
		rc.src.CloseWrite()
	case rc.r.server:
		if errors.Is(err, syscall.ECONNRESET) && rc.r.resets != nil {
			rc.r.resets.add()
		}
		rc.src.CloseWrite()
	}
}

// read takes what src sends and queues it for dst. Between Toxiproxy's calls it waits while
// pressureMark bytes are queued (the client's pace is passed on); during a call it reads at
// once, and a dst that lets ShieldBuffer bytes pile up is cut. What comes after a cut is read
// and dropped until src ends the connection.
func (rc *relayConn) read() {
	defer close(rc.queue)
	buf := chunks.Get().(*[]byte)
	defer func() { chunks.Put(buf) }()
	for {
		rc.waitRoom()
		n, err := rc.src.Read(*buf)
		if n > 0 && !rc.cut.Load() {
			if rc.queued.Load()+int64(n) > ShieldBuffer {
				rc.cutClient(fmt.Sprintf("it left %d bytes unread", rc.queued.Load()))
			} else {
				chunk := buf
				rc.queued.Add(int64(n))
				select {
				case rc.queue <- (*chunk)[:n]:
					buf = chunks.Get().(*[]byte) // write puts chunk back once it is written
				default: // 256 small chunks waiting: as full as a full buffer
					rc.queued.Add(-int64(n))
					rc.cutClient(fmt.Sprintf("it left %d chunks unread", cap(rc.queue)))
				}
			}
		}
		if err != nil {
			switch {
			case errors.Is(err, syscall.ECONNRESET): // reset_peer: dst gets a reset too
				rc.dst.SetLinger(0)
				rc.dst.Close()
			case !rc.r.server && rc.r.resets != nil && rc.r.resets.take():
				rc.resetAfter = true // the server's reset, which Toxiproxy passed on as a close
			}
			rc.src.Close()
			return
		}
	}
}

// waitRoom waits, between Toxiproxy's calls, until dst has taken enough of the queue.
func (rc *relayConn) waitRoom() {
	for !rc.cut.Load() && rc.r.draining.Load() == 0 &&
		(rc.queued.Load() >= pressureMark || len(rc.queue) >= cap(rc.queue)/2) {
		<-rc.room
	}
}

// wake lets a reader waiting in waitRoom look again.
func (rc *relayConn) wake() {
	select {
	case rc.room <- struct{}{}:
	default:
	}
}

// write gives dst what read queued, then ends its connection as src ended.
func (rc *relayConn) write() {
	for chunk := range rc.queue {
		if rc.cut.Load() {
			rc.queued.Add(-int64(len(chunk)))
			putChunk(chunk)
			continue
		}
		rc.dst.SetWriteDeadline(time.Now().Add(time.Minute)) // a bound, not a pace
		_, err := rc.dst.Write(chunk)
		rc.queued.Add(-int64(len(chunk)))
		putChunk(chunk)
		rc.wake()
		if err != nil {
			rc.cutClient("it closed its end while being written to")
		}
	}
	if rc.resetAfter {
		rc.dst.SetLinger(0)
	}
	rc.dst.Close()
}

// chunks holds the relays' read buffers. A hostile stream moves hundreds of megabytes through
// a relay in a few seconds; a new chunk for each read made the collector run about 50 times in
// a 3 s run, and each collection (stretched on a starved machine: pauses of 50 ms and more)
// held up the fault schedule's timer and Toxiproxy's calls (bench/fault-timeline.sh).
var chunks = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// putChunk gives a written chunk's buffer back to chunks.
func putChunk(c []byte) {
	c = c[:cap(c)]
	chunks.Put(&c)
}

// resetNotes carries a server's resets across Toxiproxy, from a proxy's server relay to its
// client relay. Toxiproxy says nothing of which of its upstream connections serves which
// client, so a reset is given to the next client connection that Toxiproxy ends within
// resetPairing of it: the one it ended because of that reset, unless another of the proxy's
// connections ended in the same moment.
type resetNotes struct {
	mu sync.Mutex
	at []time.Time
}

// resetPairing is how long after a server's reset Toxiproxy's close of the client's
// connection is taken for its consequence: Toxiproxy closes it at once, a starved machine
// takes longer.
const resetPairing = time.Second

func (n *resetNotes) add() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.at = append(n.at, time.Now())
}

// take says whether a reset is waiting to be passed on, and takes it.
func (n *resetNotes) take() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	for len(n.at) > 0 && now.Sub(n.at[0]) > resetPairing {
		n.at = n.at[1:]
	}
	if len(n.at) == 0 {
		return false
	}
	n.at = n.at[1:]
	return true
}

// cutClient ends dst's connection (see end), counted and named as a cut.
func (rc *relayConn) cutClient(why string) {
	first := false
	rc.cutOnce.Do(func() {
		first = true
		rc.stop()
	})
	if first { // outside the once: setDown holds the relay's lock while it ends connections
		rc.r.noteCut(rc.dst.RemoteAddr(), why)
	}
}

// end ends dst's connection as cutClient does, without counting it as a cut (a "down" fault).
func (rc *relayConn) end() { rc.cutOnce.Do(rc.stop) }

// stop closes dst and tells src that dst is done sending (a cut client: the server's response
// ends; a cut server: the client's reply ends); src is read to its end by read, so that
// Toxiproxy's chains end by their input's end, stage by stage, never on a failed write.
func (rc *relayConn) stop() {
	rc.cut.Store(true)
	rc.dst.Close()
	rc.src.CloseWrite()
	rc.wake()
}

func (rc *relayConn) closeBoth() {
	rc.cut.Store(true)
	rc.dst.Close()
	rc.src.Close()
	rc.wake()
}
