package faults

// Where Toxiproxy is embedded, its chains run without its listener (embedded_chains.go) and
// the relay in front of the proxy feeds them itself: it accepts a client, dials the server,
// and hands Toxiproxy the two connections' ends in process. Each end reads its socket into the
// chain that carries its bytes away (on that chain's reading goroutine, a pooled buffer only
// while the socket has bytes) and takes what the chain toward it hands on (on that chain's
// writing goroutine) as a relay does: between Toxiproxy's calls at the socket's pace, during
// them at once, queueing up to ShieldBuffer for a socket that does not read, which is cut then
// (see Shield). A held idle connection thus costs its two sockets and Toxiproxy's six
// goroutines, no buffer and no goroutine of the relay's: the relays between sockets
// (shield_relay.go), which a toxiproxy-server still needs, cost four more sockets, two splice
// pipes, three goroutines and a read buffer each.

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"

	"github.com/mcpchaos/mcpchaos/internal/servertime"
)

// chainConn is one client's connection through Toxiproxy's chains in process.
type chainConn struct {
	r              *relay
	client, server side
	left           atomic.Int32 // sides whose socket is not yet closed; at 0 the relay forgets it
}

// side is one socket of a chainConn as Toxiproxy's chains see it: an io.WriterTo for the
// chain that reads it, an io.ReaderFrom (and io.WriteCloser) for the chain that writes to it.
type side struct {
	c    *chainConn
	conn *net.TCPConn
	ends ends

	inOnce  sync.Once
	inEnded chan struct{} // closed once the end of what it sends is passed to Toxiproxy

	mu         sync.Mutex
	queue      []queued // what the socket has not yet taken, in order
	flushing   bool     // a flush goroutine writes the queue (while it is not empty)
	outDone    bool     // the chain toward it has ended: close it once the queue is written
	closed     bool
	resetAfter bool          // reset (linger 0) rather than close: the server reset its connection
	holdFor    time.Duration // server's side: hold the socket open this long, not close it (half_open)

	lastGET atomic.Bool // client's side: its latest request is a GET (halfopen.go)

	queuedBytes atomic.Int64
	queuedN     atomic.Int32
	cut         atomic.Bool
	cutOnce     sync.Once
	room        chan struct{} // a token when the queue shrank, a drain began or the side was cut
	one         [1]byte       // what waits for the chain's next chunk reads into
	// timer, on the server's side with a meter, times the server's replies (MeterServer)
	timer *servertime.Timer
}

// maxQueued chunks waiting are as full as a full queue (256 small writes); a reader waits
// between calls from half of it on.
const maxQueued = 256

// queued is a pooled buffer's bytes lo:hi, not yet written.
type queued struct {
	buf    *[]byte
	lo, hi int
}

func (s *side) init(c *chainConn, conn *net.TCPConn, server bool) {
	s.c, s.conn, s.ends.server = c, conn, server
	s.inEnded, s.room = make(chan struct{}), make(chan struct{}, 1)
}

// serveChains dials the server for a client accepted by a relay in front of Toxiproxy's
// chains, and starts the chains between them.
func (r *relay) serveChains(accepted *net.TCPConn) {
	d := net.Dialer{Timeout: 5 * time.Second}
	dc, err := d.Dial("tcp", r.inner)
	if err != nil {
		accepted.SetLinger(0)
		accepted.Close()
		return
	}
	c := &chainConn{r: r}
	c.client.init(c, accepted, false)
	c.server.init(c, dc.(*net.TCPConn), true)
	if m := r.meter.Load(); m != nil {
		c.server.timer, _ = servertime.NewTimer(c.server.conn, m) // unmeasured where the kernel cannot stamp
	}
	c.left.Store(2)
	r.gate.open(&c.client.ends)
	r.gate.open(&c.server.ends)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		c.closeBoth()
		return
	}
	r.conns[c] = true
	down := r.ln == nil // down since it was accepted: ended as a cut does
	r.mu.Unlock()
	if down {
		c.end()
	}
	r.chains.start(r.seq.Add(1), &c.client, &c.server)
}

func (c *chainConn) wake() {
	c.client.wake()
	c.server.wake()
}

func (c *chainConn) end() { c.client.cutOnce.Do(c.client.stop) }

func (c *chainConn) closeBoth() {
	for _, s := range []*side{&c.client, &c.server} {
		s.cut.Store(true)
		s.conn.Close()
		c.r.gate.gone(&s.ends)
		s.wake()
	}
}

func (c *chainConn) stalled(out []string) []string {
	for _, s := range []*side{&c.client, &c.server} {
		if q := s.queuedBytes.Load(); q > 0 {
			out = append(out, fmt.Sprintf("%s (%s, %d bytes unread)", s.conn.RemoteAddr(), s.what(), q))
		}
	}
	return out
}

// what names the side in a message, as the relays between sockets do.
func (s *side) what() string {
	if s.ends.server {
		return "proxy " + s.c.r.name + "'s server"
	}
	return "proxy " + s.c.r.name
}

// WriteTo feeds w (Toxiproxy's chain away from the socket) what the socket sends, until it
// ends, is cut, or its end is passed (endInput). The end reaches Toxiproxy only through the
// teardowns (see shield_teardown.go), so it waits here until it is passed. A server's reset
// reaches the client as a reset once its queue is written.
func (s *side) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		n, err := s.readTo(w)
		total += int64(n)
		if err != nil {
			if s.ends.server && isReset(err) {
				cl := &s.c.client
				cl.mu.Lock()
				cl.resetAfter = true
				cl.mu.Unlock()
			}
			break
		}
	}
	s.endInput()
	<-s.inEnded
	return total, nil
}

// Read implements io.Reader; Toxiproxy's copy uses WriteTo, which passes the socket's end on
// through the teardowns, and Read is there only for the type.
func (s *side) Read(p []byte) (int, error) { return s.conn.Read(p) }

// endInput ends what Toxiproxy reads from the socket, when no change of its toxics is under
// way (see teardowns); WriteTo returns then.
func (s *side) endInput() {
	s.inOnce.Do(func() {
		s.c.r.gate.pass(&s.ends, func() {
			close(s.inEnded)
			s.conn.SetReadDeadline(longAgo) // wakes WriteTo's read
		})
	})
}

var longAgo = time.Unix(1, 0)

// closedChan interrupts a ChanReader's read at once when no chunk is waiting.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// ReadFrom takes what Toxiproxy's chain toward the socket hands on, until the chain ends:
// between Toxiproxy's calls at the socket's pace (it waits while pressureMark bytes are
// queued), during them at once. It never returns before the chain's end, cut or not: a chain
// whose writer stops can never be paused again (see Shield). The chain's end is seen (see
// teardowns), the socket's own input ended, and the socket closed once its queue is written.
func (s *side) ReadFrom(r io.Reader) (int64, error) {
	cr, _ := r.(*stream.ChanReader)
	var total int64
	for {
		s.waitRoom()
		buf, n, err := s.take(r, cr)
		total += int64(n)
		s.give(buf, n)
		if err != nil {
			break
		}
	}
	s.c.r.gate.seen(&s.ends)
	s.endInput()
	s.mu.Lock()
	s.outDone = true
	idle := !s.flushing
	s.mu.Unlock()
	if idle {
		s.finish()
	}
	return total, nil
}

// take reads the chain's next chunk: it waits in a one-byte read, which holds no buffer, and
// then takes what else is waiting into a pooled buffer without waiting (a ChanReader's read
// returns at once when its interrupt is closed and no chunk is waiting).
func (s *side) take(r io.Reader, cr *stream.ChanReader) (*[]byte, int, error) {
	n, err := r.Read(s.one[:])
	if n == 0 {
		return nil, 0, err
	}
	buf := chunks.Get().(*[]byte)
	b := *buf
	b[0] = s.one[0]
	if err != nil || cr == nil {
		return buf, n, err
	}
	cr.SetInterrupt(closedChan)
	defer cr.SetInterrupt(nil)
	for n < len(b) {
		k, rerr := cr.Read(b[n:])
		n += k
		if rerr != nil {
			if rerr != stream.ErrInterrupted {
				err = rerr
			}
			break
		}
	}
	return buf, n, err
}

// give queues buf's first n bytes for the socket, or writes what the socket takes at once when
// nothing is queued; a socket that lets ShieldBuffer bytes (or 256 chunks) pile up is cut.
func (s *side) give(buf *[]byte, n int) {
	if buf == nil {
		return
	}
	if n == 0 || s.cut.Load() {
		chunks.Put(buf)
		return
	}
	s.mu.Lock()
	if q, k := s.queuedBytes.Load(), len(s.queue); q+int64(n) > ShieldBuffer || k >= maxQueued {
		s.mu.Unlock()
		chunks.Put(buf)
		why := fmt.Sprintf("it left %d bytes unread", q)
		if q+int64(n) <= ShieldBuffer {
			why = fmt.Sprintf("it left %d chunks unread", k)
		}
		s.cutSide(why)
		return
	}
	lo := 0
	if !s.flushing { // nothing queued
		w, err := s.writeNow((*buf)[:n])
		if err != nil {
			s.mu.Unlock()
			chunks.Put(buf)
			s.cutSide("it closed its end while being written to")
			return
		}
		if lo = w; lo == n {
			s.mu.Unlock()
			chunks.Put(buf)
			return
		}
	}
	s.queue = append(s.queue, queued{buf, lo, n})
	s.queuedBytes.Add(int64(n - lo))
	s.queuedN.Add(1)
	if !s.flushing {
		s.flushing = true
		go s.flush()
	}
	s.mu.Unlock()
}

// flush writes the queue to the socket until it is empty, then ends (a new one starts with
// the next queue); it closes the socket if the chain toward it has ended meanwhile.
func (s *side) flush() {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.queue = nil
			s.flushing = false
			s.conn.SetWriteDeadline(time.Time{}) // writeNow must not find this bound passed
			done := s.outDone
			s.mu.Unlock()
			if done {
				s.finish()
			}
			return
		}
		q := s.queue[0]
		s.queue[0] = queued{}
		s.queue = s.queue[1:]
		s.mu.Unlock()
		if !s.cut.Load() {
			s.conn.SetWriteDeadline(time.Now().Add(time.Minute)) // a bound, not a pace
			start := s.timer.BeforeWrite()
			_, err := s.conn.Write((*q.buf)[q.lo:q.hi])
			s.timer.AfterWrite(start)
			if err != nil {
				s.cutSide("it closed its end while being written to")
			}
		}
		s.queuedBytes.Add(-int64(q.hi - q.lo))
		s.queuedN.Add(-1)
		chunks.Put(q.buf)
		s.wake()
	}
}

// waitRoom waits, between Toxiproxy's calls, until the socket has taken enough of the queue.
func (s *side) waitRoom() {
	for !s.cut.Load() && s.c.r.draining.Load() == 0 &&
		(s.queuedBytes.Load() >= pressureMark || s.queuedN.Load() >= maxQueued/2) {
		<-s.room
	}
}

func (s *side) wake() {
	select {
	case s.room <- struct{}{}:
	default:
	}
}

// Write implements io.Writer for a chain that does not use ReadFrom: a copy of p is queued.
func (s *side) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		buf := chunks.Get().(*[]byte)
		n := copy(*buf, rest)
		s.give(buf, n)
		rest = rest[n:]
	}
	return len(p), nil
}

// Close implements io.Closer: Toxiproxy closes the writer after ReadFrom, which has ended the
// side already.
func (s *side) Close() error { return nil }

// finish closes the socket, once: its chain has ended and its queue is written.
func (s *side) finish() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	reset, hold := s.resetAfter, s.holdFor
	s.mu.Unlock()
	if reset {
		s.conn.SetLinger(0)
	}
	if hold > 0 && !s.cut.Load() {
		s.c.r.hold(s.conn, hold)
	} else {
		s.conn.Close()
	}
	if s.c.left.Add(-1) == 0 {
		s.c.r.mu.Lock()
		delete(s.c.r.conns, s.c)
		s.c.r.mu.Unlock()
	}
}

// cutSide ends the socket (see stop), counted and named as a cut.
func (s *side) cutSide(why string) {
	first := false
	s.cutOnce.Do(func() {
		first = true
		s.stop()
	})
	if first { // outside the once: setDown holds the relay's lock while it ends connections
		s.c.r.noteCut(s.conn.RemoteAddr(), s.what(), why)
	}
}

// stop closes the socket and ends what Toxiproxy reads from it (a cut client: the server's
// response ends; a cut server: the client's reply ends); what the chain toward it still hands
// on is read and dropped until the chain ends, so that Toxiproxy's chains end by their input's
// end, stage by stage, never on a failed write.
func (s *side) stop() {
	s.cut.Store(true)
	s.conn.Close()
	s.endInput()
	s.wake()
}
