package faults

// The relays of Shield (shield.go): a listener and its connections, each read at the far
// side's pace between Toxiproxy's calls and at once during them.

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

	"github.com/mcpchaos/mcpchaos/internal/servertime"
)

// relay is one listener and its connections: in front of a proxy (inner is the proxy; the
// client is the side that may not read) or, with server, between a proxy and its server
// (inner is the server, the side that may not read).
type relay struct {
	name, inner string
	server      bool
	cuts        *atomic.Int64
	resets      *resetNotes // shared by a proxy's two relays; nil without a server relay
	gate        *teardowns  // shared by a proxy's two relays
	// chains: Toxiproxy's chains in this process, which the relay feeds itself (shield_chains.go)
	chains *chains
	seq    atomic.Uint64 // numbers connections for chains

	draining atomic.Int32 // Toxiproxy calls under way on the proxy: read at once (see during)
	// meter times the server's replies on a server relay's connections to it (Shielded.MeterServer)
	meter atomic.Pointer[servertime.Meter]

	mu     sync.Mutex
	addr   string
	ln     net.Listener
	down   string
	closed bool
	conns  map[relayed]bool
	recent []string // the last connections cut, for an error that must say what stalled
	ho     halfOpens
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
	// No TCP keep-alive on the clients' side: the relay listens on loopback, where a peer that
	// goes away is told by its kernel, and the probe's four setsockopt calls on every
	// accepted connection were a tenth of the proxy's CPU per session established (perf,
	// `mcpchaos bench`). The server's side keeps Go's default, as a direct client's would.
	lc := net.ListenConfig{KeepAlive: -1}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
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
		if r.chains != nil {
			go r.serveChains(c.(*net.TCPConn))
		} else {
			go r.serve(c.(*net.TCPConn))
		}
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
	r.closeHeld()
}

func (r *relay) stalled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for rc := range r.conns {
		out = rc.stalled(out)
	}
	return append(out, r.recent...)
}

// noteCut remembers that the client at addr was cut, and why.
func (r *relay) noteCut(addr net.Addr, what, why string) {
	r.cuts.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recent = append(r.recent, fmt.Sprintf("%s (%s, cut: %s)", addr, what, why))
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

// relayed is one connection through a relay: a relayConn, or a chainConn where Toxiproxy's chains
// run in this process (shield_chains.go).
type relayed interface {
	wake()                         // a call of Toxiproxy's began: a reader waiting for room looks again
	end()                          // the proxy went down: end the client as a cut does, uncounted
	closeBoth()                    // the relay closes
	stalled(out []string) []string // adds what waits unread, for an error that must say
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
	ends       ends // src as the teardowns see it
	// timed, on a server relay with a meter, reads and writes dst so that the server's replies
	// are timed by the kernel's stamps (nil: dst unmeasured)
	timed *servertime.Conn
}

// dstIO is what reads and writes dst: the timed connection where there is one.
func (rc *relayConn) dstIO() io.ReadWriter {
	if rc.timed != nil {
		return rc.timed
	}
	return rc.dst
}

func (r *relay) serve(accepted *net.TCPConn) {
	rc := &relayConn{r: r, ends: ends{server: r.server}, dst: accepted, queue: make(chan []byte, 256), room: make(chan struct{}, 1)}
	if r.server { // Toxiproxy's connection: counted from its start, its server not yet reached
		rc.src, rc.dst = accepted, nil
		r.gate.open(&rc.ends)
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	dc, err := d.Dial("tcp", r.inner)
	if err != nil {
		accepted.SetLinger(0)
		accepted.Close()
		if r.server {
			r.gate.gone(&rc.ends)
		}
		return
	}
	if r.server {
		rc.dst = dc.(*net.TCPConn)
		if m := r.meter.Load(); m != nil {
			rc.timed, _ = servertime.Wrap(rc.dst, m) // unmeasured where the kernel cannot stamp
		}
	} else {
		rc.src = dc.(*net.TCPConn)
		r.gate.open(&rc.ends)
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

// endSrc ends what Toxiproxy reads from src, by end, when no change of its toxics is under
// way (see teardowns).
func (rc *relayConn) endSrc(end func() error) { rc.r.gate.pass(&rc.ends, func() { end() }) }

// back copies what dst sends to src; dst's end of sending is passed on. A server that broke
// its connection (a reset) ends what Toxiproxy reads from us too (left open, the client would
// wait for the rest of the response until its own timeout), by an ordinary end, never by
// closing or resetting src: Toxiproxy's writer to src would then fail and stop, and a toxic
// chain whose writer has stopped can never be paused again. read goes on reading src to its
// end. The reset is noted for the proxy's client relay, since Toxiproxy ends the client's
// connection with an ordinary close (see resetNotes). A client's broken connection is found
// by write, which cuts it.
func (rc *relayConn) back() {
	_, err := io.Copy(rc.src, rc.dstIO())
	switch {
	case err == nil:
		rc.endSrc(rc.src.CloseWrite)
	case rc.r.server:
		if errors.Is(err, syscall.ECONNRESET) && rc.r.resets != nil {
			rc.r.resets.add()
		}
		rc.endSrc(rc.src.CloseWrite)
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
			rc.r.gate.seen(&rc.ends)
			rc.endSrc(rc.src.Close)
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
		_, err := rc.dstIO().Write(chunk)
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
		rc.r.noteCut(rc.dst.RemoteAddr(), rc.r.what(), why)
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
	rc.endSrc(rc.src.CloseWrite)
	rc.wake()
}

func (rc *relayConn) closeBoth() {
	rc.cut.Store(true)
	rc.dst.Close()
	rc.src.Close()
	rc.r.gate.gone(&rc.ends)
	rc.wake()
}

// stalled adds rc to out if its dst has bytes waiting (see Shielded.Stalled).
func (rc *relayConn) stalled(out []string) []string {
	if q := rc.queued.Load(); q > 0 {
		out = append(out, fmt.Sprintf("%s (%s, %d bytes unread)", rc.dst.RemoteAddr(), rc.r.what(), q))
	}
	return out
}
