package servertime

import (
	"sync"
	"sync/atomic"
	"time"
)

// MaxWriteSpan bounds a recorded sample's error: an exchange whose last write took longer,
// clock to clock, may carry a wait of the writing thread and is not recorded.
const MaxWriteSpan = time.Millisecond

// Meter receives the exchanges' times of every connection wrapped with it.
type Meter struct {
	// Record gets each exchange's time, from the request's last write to the reply's first
	// byte's arrival. Called on the connection's reading or writing goroutine.
	Record func(time.Duration)
	unsure atomic.Int64
}

// Unsure is how many exchanges were left out: their write took longer than MaxWriteSpan, or
// their reply came unstamped.
func (m *Meter) Unsure() int64 { return m.unsure.Load() }

// exchange is the state of one connection's request and reply, kept by the writer and the
// reader under mu.
type exchange struct {
	mu      sync.Mutex
	sent    int64 // unix ns just before the last write of the awaited request; 0 when none awaited
	writing bool  // that write's system call has not returned yet
	span    int64 // that write's length, clock to clock, in ns
	reply   int64 // the kernel's arrival time of the reply's first byte; 0 until seen
}

// beforeWrite opens an exchange (or moves its send time to this later write of the same
// request) before the system call, since a reply may arrive before the call returns.
func (e *exchange) beforeWrite(now int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.reply != 0 { // the previous exchange is over: a new request
		e.reply = 0
	}
	e.sent, e.writing = now, true
}

// afterWrite closes the write; the exchange is recorded if its reply came already.
func (e *exchange) afterWrite(start, now int64, m *Meter) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sent != start { // a later write of the request moved it on (not from this goroutine, but be safe)
		return
	}
	e.writing, e.span = false, now-start
	e.finish(m)
}

// awaiting reports whether a request waits for its reply's first byte.
func (e *exchange) awaiting() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sent != 0 && e.reply == 0
}

// arrived notes the kernel's arrival stamp of bytes read while a reply is awaited. Bytes that
// arrived before the request was sent are the rest of an earlier reply, not this one's.
func (e *exchange) arrived(stamp int64, m *Meter) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sent == 0 || e.reply != 0 || stamp < e.sent {
		return
	}
	e.reply = stamp
	e.finish(m)
}

// unstamped ends an awaited exchange whose reply arrived without a kernel stamp: unrecorded,
// as the later bytes of its reply must not time it.
func (e *exchange) unstamped(m *Meter) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sent == 0 || e.reply != 0 {
		return
	}
	e.sent, e.reply = 0, 1
	m.unsure.Add(1)
}

// finish records the exchange once both its write returned and its reply arrived.
func (e *exchange) finish(m *Meter) {
	if e.writing || e.reply == 0 || e.sent == 0 {
		return
	}
	d := e.reply - e.sent
	e.sent = 0
	e.reply = 1 // over: the next write opens a new exchange
	if e.span > int64(MaxWriteSpan) {
		m.unsure.Add(1)
		return
	}
	if m.Record != nil {
		m.Record(time.Duration(d))
	}
}
