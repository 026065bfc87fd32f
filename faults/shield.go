package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
// proxy and reads whatever Toxiproxy sends at once, queueing up to ShieldBuffer bytes per
// connection for the client. A client that lets the queue fill, or goes away, is cut by the
// relay itself (its connection closed, Toxiproxy's told the client is done), and the relay
// keeps reading and discarding what Toxiproxy still sends, so no toxic ever waits on it.
// A "down" fault closes the relay's listener too, so that a client still finds the port
// refusing connections; a reset (reset_peer) is passed on as a reset.

// ShieldBuffer bounds what a relay holds for one client that is not reading.
const ShieldBuffer = 1 << 20

// Shielded is an Injector whose proxies sit behind relays (see Shield).
type Shielded struct {
	Injector
	mu     sync.Mutex
	relays map[string]*relay
	cuts   atomic.Int64
}

// Shield wraps inj so that no client can stall its proxies' toxic chains.
func Shield(inj Injector) *Shielded {
	return &Shielded{Injector: inj, relays: map[string]*relay{}}
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
	inner, err := s.Injector.AddProxy(ctx, name, upstream)
	if err != nil {
		return "", err
	}
	r := &relay{name: name, inner: inner, conns: map[*relayConn]bool{}, cuts: &s.cuts}
	if err := r.listen("127.0.0.1:0"); err != nil {
		return "", fmt.Errorf("faults: proxy %s: relay: %w", name, err)
	}
	s.mu.Lock()
	s.relays[name] = r
	s.mu.Unlock()
	return r.addr, nil
}

// AddToxic implements Injector; a "down" fault also closes the relay's listener and cuts its
// connections.
func (s *Shielded) AddToxic(ctx context.Context, proxy string, t Toxic) error {
	if err := s.Injector.AddToxic(ctx, proxy, t); err != nil {
		return err
	}
	if r := s.relay(proxy); r != nil && t.Type == TypeDown {
		r.setDown(t.Name)
	}
	return nil
}

// RemoveToxic implements Injector; ending a "down" fault listens again on the relay's address.
func (s *Shielded) RemoveToxic(ctx context.Context, proxy, name string) error {
	if err := s.Injector.RemoveToxic(ctx, proxy, name); err != nil {
		return err
	}
	if r := s.relay(proxy); r != nil && r.isDown(name) {
		if err := r.listen(r.addr); err != nil {
			return fmt.Errorf("faults: proxy %s: end fault %s: relay: listen again on %s: %w", proxy, name, r.addr, err)
		}
	}
	return nil
}

// Close implements Injector: the relays, then the proxies.
func (s *Shielded) Close() error {
	s.mu.Lock()
	relays := s.relays
	s.relays = map[string]*relay{}
	s.mu.Unlock()
	for _, r := range relays {
		r.close()
	}
	return s.Injector.Close()
}

// Stalled names the connections of proxy whose clients are not reading what they are sent,
// for an error that must say what holds Toxiproxy.
func (s *Shielded) Stalled(proxy string) []string {
	r := s.relay(proxy)
	if r == nil {
		return nil
	}
	return r.stalled()
}

func (s *Shielded) relay(name string) *relay {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.relays[name]
}

type relay struct {
	name, inner string
	cuts        *atomic.Int64

	mu     sync.Mutex
	addr   string
	ln     net.Listener
	down   string
	closed bool
	conns  map[*relayConn]bool
	recent []string // the last connections cut, for an error that must say what stalled
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

func (r *relay) setDown(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = name
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for rc := range r.conns {
		rc.closeBoth()
	}
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
			out = append(out, fmt.Sprintf("%s (proxy %s, %d bytes unread)", rc.client.RemoteAddr(), r.name, q))
		}
	}
	return append(out, r.recent...)
}

// noteCut remembers that the client at addr was cut, and why.
func (r *relay) noteCut(addr net.Addr, why string) {
	r.cuts.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recent = append(r.recent, fmt.Sprintf("%s (proxy %s, cut: %s)", addr, r.name, why))
	if len(r.recent) > 8 {
		r.recent = r.recent[len(r.recent)-8:]
	}
}

// relayConn is one client connection and its connection to the proxy.
type relayConn struct {
	r             *relay
	client, proxy *net.TCPConn
	queue         chan []byte
	queued        atomic.Int64
	cutOnce       sync.Once
	cut           atomic.Bool
}

func (r *relay) serve(client *net.TCPConn) {
	d := net.Dialer{Timeout: 5 * time.Second}
	pc, err := d.Dial("tcp", r.inner)
	if err != nil {
		client.SetLinger(0)
		client.Close()
		return
	}
	rc := &relayConn{r: r, client: client, proxy: pc.(*net.TCPConn), queue: make(chan []byte, 256)}
	r.mu.Lock()
	if r.closed || r.ln == nil {
		r.mu.Unlock()
		rc.closeBoth()
		return
	}
	r.conns[rc] = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.conns, rc)
		r.mu.Unlock()
	}()
	go rc.upstream()
	go rc.write()
	rc.read()
}

// upstream copies what the client sends to the proxy; the client's end of sending is passed on.
func (rc *relayConn) upstream() {
	if _, err := io.Copy(rc.proxy, rc.client); err == nil {
		rc.proxy.CloseWrite()
	}
}

// read takes whatever the proxy sends at once, queueing it for the client; it never blocks on
// the client. A client that lets ShieldBuffer bytes pile up is cut; what comes after a cut is
// read and dropped until the proxy ends the connection.
func (rc *relayConn) read() {
	defer close(rc.queue)
	buf := make([]byte, 32<<10)
	for {
		n, err := rc.proxy.Read(buf)
		if n > 0 && !rc.cut.Load() {
			if rc.queued.Load()+int64(n) > ShieldBuffer {
				rc.cutClient(fmt.Sprintf("it left %d bytes unread", rc.queued.Load()))
			} else {
				chunk := append([]byte(nil), buf[:n]...)
				rc.queued.Add(int64(n))
				select {
				case rc.queue <- chunk:
				default: // 256 small chunks waiting: as full as a full buffer
					rc.queued.Add(-int64(n))
					rc.cutClient(fmt.Sprintf("it left %d chunks unread", cap(rc.queue)))
				}
			}
		}
		if err != nil {
			if errors.Is(err, syscall.ECONNRESET) { // reset_peer: the client gets a reset too
				rc.client.SetLinger(0)
				rc.client.Close()
			}
			rc.proxy.Close()
			return
		}
	}
}

// write gives the client what read queued, then ends its connection as the proxy ended.
func (rc *relayConn) write() {
	for chunk := range rc.queue {
		if rc.cut.Load() {
			rc.queued.Add(-int64(len(chunk)))
			continue
		}
		rc.client.SetWriteDeadline(time.Now().Add(time.Minute)) // a bound, not a pace
		_, err := rc.client.Write(chunk)
		rc.queued.Add(-int64(len(chunk)))
		if err != nil {
			rc.cutClient("it closed its end while being written to")
		}
	}
	rc.client.Close()
}

// cutClient ends the client's connection and tells the proxy the client is done sending, so
// that the server's response ends; the proxy's side is read to its end by read.
func (rc *relayConn) cutClient(why string) {
	rc.cutOnce.Do(func() {
		rc.cut.Store(true)
		rc.r.noteCut(rc.client.RemoteAddr(), why)
		rc.client.Close()
		rc.proxy.CloseWrite()
	})
}

func (rc *relayConn) closeBoth() {
	rc.client.Close()
	rc.proxy.Close()
}
