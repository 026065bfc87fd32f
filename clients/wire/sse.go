package wire

import (
	"bytes"
	"io"
	"iter"
	"strconv"
	"sync/atomic"
	"time"

	sse "github.com/tmaxmax/go-sse"
)

// Event is one SSE event as the client sees it.
type Event struct {
	// Cursor is the stream's last event ID after this event (the WHATWG "last event ID
	// buffer"): what a reconnect sends back as Last-Event-ID.
	Cursor string
	// Data is the event's data; empty for a priming event, which only moves the cursor.
	Data string
}

// readEvents parses an SSE body per the WHATWG rules (go-sse does the parsing), refusing any
// event larger than maxEvent bytes. Retry fields are reported through retry.
func readEvents(body io.Reader, maxEvent int, retry *atomic.Int64) iter.Seq2[Event, error] {
	r := body
	if retry != nil {
		r = &retrySniffer{r: body, retry: retry}
	}
	return func(yield func(Event, error) bool) {
		for ev, err := range sse.Read(r, &sse.ReadConfig{MaxEventSize: maxEvent}) {
			if err != nil {
				yield(Event{}, err)
				return
			}
			if !yield(Event{Cursor: ev.LastEventID, Data: ev.Data}, nil) {
				return
			}
		}
	}
}

// retrySniffer passes a stream through untouched while noting `retry:` fields.
//
// go-sse's Read parses every field but drops `retry:` (only its self-reconnecting Connection
// uses it), and mcpchaos must reconnect itself to measure replays. So this reader watches line
// starts for the one field Read discards; all other parsing stays go-sse's. Lines longer than
// the sniffer's small buffer cannot be retry fields worth honouring and are skipped.
type retrySniffer struct {
	r     io.Reader
	retry *atomic.Int64 // milliseconds; last value seen
	line  []byte        // the current line's start, up to 32 bytes
	long  bool          // the current line outgrew line
	cr    bool          // the previous byte was CR (CRLF counts as one line end)
}

func (s *retrySniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	for _, b := range p[:n] {
		if b == '\n' && s.cr {
			s.cr = false
			continue
		}
		s.cr = b == '\r'
		if b == '\r' || b == '\n' {
			s.endLine()
			continue
		}
		if len(s.line) < 32 {
			s.line = append(s.line, b)
		} else {
			s.long = true
		}
	}
	return n, err
}

func (s *retrySniffer) endLine() {
	if !s.long {
		if v, ok := bytes.CutPrefix(s.line, []byte("retry:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			// WHATWG: only ASCII digits count; anything else is ignored.
			if ms, err := strconv.ParseInt(string(v), 10, 64); err == nil && ms >= 0 && len(v) > 0 && v[0] != '+' {
				s.retry.Store(ms)
			}
		}
	}
	s.line, s.long = s.line[:0], false
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
