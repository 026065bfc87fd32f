package wire

import (
	"bufio"
	"bytes"
	"io"
	"iter"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Event is one SSE event as the client sees it.
type Event struct {
	// Cursor is the stream's last event ID after this event (the WHATWG "last event ID
	// buffer"): what a reconnect sends back as Last-Event-ID.
	Cursor string
	// Data is the event's data; empty for a priming event, which only moves the cursor.
	Data string
}

// readEvents parses an SSE body per the WHATWG rules, refusing any event larger than maxEvent
// bytes (the error wraps bufio.ErrTooLong, which ClassifyRead names). Retry fields are
// reported through retry.
//
// Why not go-sse (github.com/tmaxmax/go-sse), which did this before: its Read scans with a
// bufio.Scanner whose 4 KiB buffer it allocates per stream and does not let the caller size,
// and it drops `retry:`, so a second reader had to sniff for it. Measured with `mcpchaos bench
// --sessions 3000` (heap profile of the held sessions), that scanner buffer was the largest
// single item of a held session (4 KiB of about 18), and the same 4 KiB became garbage with
// every SSE reply to a POST. This parser holds no buffer while a stream is idle: it waits for
// the first byte of the next burst in a one-byte read, and only then borrows a buffer from a
// pool, giving it back once every complete line is parsed. Its observable behaviour is
// go-sse's Read (FuzzReadEventsLikeGoSSE checks that against go-sse itself).
func readEvents(body io.Reader, maxEvent int, retry *atomic.Int64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if maxEvent <= 0 {
			maxEvent = bufio.MaxScanTokenSize // go-sse's default
		}
		p := sseParser{r: body, maxEvent: maxEvent, retry: retry}
		defer p.release()
		for {
			ev, err, ok := p.next()
			if !ok {
				return
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// sseChunk is the size of a pooled read buffer: most events and keepalives fit in one; a
// longer line grows a buffer of its own (up to the event cap), dropped after its event.
const sseChunk = 4 << 10

var ssePool = sync.Pool{New: func() any { return new([sseChunk]byte) }}

// sseParser is the state of one SSE body being read (the WHATWG "event stream interpretation").
type sseParser struct {
	r        io.Reader
	maxEvent int
	retry    *atomic.Int64 // milliseconds; nil when nobody asks
	one      [1]byte       // the idle wait's read target (here so it does not escape per read)

	pooled     *[sseChunk]byte // the borrowed buffer, when buf is it
	buf        []byte          // buf[start:end] is read and not yet parsed
	start, end int
	rerr       error // the read error that ends the body, once buffered lines are parsed
	empty      int   // reads in a row that returned nothing

	cr      bool   // the last line ended in CR: an LF right after it belongs to it
	started bool   // a non-blank line was seen (a byte order mark may only come before it)
	size    int    // bytes of the current event's complete lines so far
	data    []byte // the event's data lines, each with "\n"
	dirty   bool   // the event has a field that makes it dispatched (data, event, id)
	cursor  string // the last event ID buffer
}

// next returns the next event, or an error (ok is then true), or ok false at the body's clean end.
func (p *sseParser) next() (ev Event, err error, ok bool) {
	for {
		line, found := p.line()
		if !found {
			if p.rerr != nil {
				if p.rerr == io.EOF {
					return Event{}, nil, false // an unfinished line or event at the end is dropped
				}
				if p.dirty || p.size > 0 || p.end > p.start {
					return Event{}, &MidEventError{Err: p.rerr}, true
				}
				return Event{}, p.rerr, true
			}
			if p.size+(p.end-p.start) > p.maxEvent {
				return Event{}, bufio.ErrTooLong, true
			}
			p.fill()
			continue
		}
		if p.size += len(line) + 1; p.size > p.maxEvent {
			return Event{}, bufio.ErrTooLong, true
		}
		if ev, ok := p.field(line); ok {
			return ev, nil, true
		}
	}
}

// line cuts the next complete line out of the buffer (CRLF, LF or CR ends it).
func (p *sseParser) line() ([]byte, bool) {
	if p.cr && p.start < p.end {
		if p.buf[p.start] == '\n' {
			p.start++
		}
		p.cr = false
	}
	b := p.buf[p.start:p.end]
	i := bytes.IndexAny(b, "\r\n")
	if i < 0 {
		return nil, false
	}
	p.start += i + 1
	p.cr = b[i] == '\r'
	return b[:i], true
}

// field interprets one line; a blank line dispatches the event when it has one.
func (p *sseParser) field(line []byte) (Event, bool) {
	if p.retry != nil {
		sniffRetry(line, p.retry)
	}
	if !p.started && len(line) > 0 {
		p.started = true
		line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
	}
	if len(line) == 0 {
		p.size = 0
		if !p.dirty {
			return Event{}, false
		}
		ev := Event{Cursor: p.cursor}
		if len(p.data) > 0 {
			ev.Data = string(p.data[:len(p.data)-1])
		}
		p.data, p.dirty = p.data[:0], false
		if cap(p.data) > sseChunk {
			p.data = nil // a big event's buffer is not kept for the stream's life
		}
		return ev, true
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		value = bytes.TrimPrefix(value, []byte(" "))
	}
	switch string(name) {
	case "data":
		p.data = append(append(p.data, value...), '\n')
		p.dirty = true
	case "event":
		p.dirty = true // the type itself means nothing to MCP
	case "id":
		if bytes.IndexByte(value, 0) >= 0 {
			break // WHATWG: an id with NUL is ignored
		}
		if string(value) != p.cursor {
			p.cursor = string(value)
		}
		p.dirty = true
	}
	// retry is sniffed above; comments and unknown fields are ignored.
	return Event{}, false
}

// fill reads more of the body. With nothing buffered it first waits for one byte, so that an
// idle stream holds no buffer; then it reads into a pooled buffer, or a grown one when a line
// outgrows the buffer.
func (p *sseParser) fill() {
	if p.start == p.end { // all parsed: wait for the next burst without a buffer
		p.release()
		p.start, p.end = 0, 0
		n, err := p.r.Read(p.one[:])
		if !p.noteRead(n, err) {
			return
		}
		p.pooled = ssePool.Get().(*[sseChunk]byte)
		p.buf = p.pooled[:]
		p.buf[0] = p.one[0]
		p.end = 1
	}
	if p.end == len(p.buf) {
		if p.start > 0 { // make room by moving the partial line to the front
			p.end = copy(p.buf, p.buf[p.start:p.end])
			p.start = 0
		} else { // the partial line fills the buffer: a bigger one, up to the event cap
			grown := make([]byte, min(2*len(p.buf), p.maxEvent+1))
			p.end = copy(grown, p.buf[p.start:p.end])
			p.release()
			p.buf = grown
		}
	}
	if p.rerr != nil {
		return // the one-byte read ended the body along with its byte
	}
	n, err := p.r.Read(p.buf[p.end:])
	p.end += n
	p.noteRead(n, err)
}

// noteRead records a read's error, or the lack of progress of too many empty reads in a row
// (as bufio.Scanner does); it reports whether bytes came.
func (p *sseParser) noteRead(n int, err error) bool {
	if err != nil {
		p.rerr = err
	}
	if n > 0 {
		p.empty = 0
		return true
	}
	if p.empty++; p.empty >= 100 && p.rerr == nil {
		p.rerr = io.ErrNoProgress
	}
	return false
}

// release gives a pooled buffer back (a grown one is left to the collector).
func (p *sseParser) release() {
	if p.pooled != nil {
		ssePool.Put(p.pooled)
	}
	p.pooled, p.buf = nil, nil
}

// sniffRetry notes a `retry:` line. Lines over 32 bytes cannot be retry fields worth honouring
// and are skipped, as are values that are not plain decimal digits (WHATWG).
func sniffRetry(line []byte, retry *atomic.Int64) {
	if len(line) > 32 {
		return
	}
	if v, ok := bytes.CutPrefix(line, []byte("retry:")); ok {
		v = bytes.TrimPrefix(v, []byte(" "))
		if ms, err := strconv.ParseInt(string(v), 10, 64); err == nil && ms >= 0 && len(v) > 0 && v[0] != '+' {
			retry.Store(ms)
		}
	}
}

// RetryDelay turns the server's retry value into a delay, bounded so that a hostile or absurd
// value cannot park a client for the whole run.
func RetryDelay(ms int64, fallback, ceiling time.Duration) time.Duration {
	if ms < 0 {
		return fallback
	}
	if ms > int64(ceiling/time.Millisecond) { // also keeps ms*1e6 from overflowing
		return ceiling
	}
	return min(time.Duration(ms)*time.Millisecond, ceiling)
}
