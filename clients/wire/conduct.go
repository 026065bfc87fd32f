package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// What a server did that a client copes with but a person must hear of: the server's conduct,
// seen where the bytes are (the transport, the SSE parser), counted by behaviour, with the
// words of its first instance. A run names it in its first problem lines and inspect in its
// own, so that what follows (calls not made, sessions that never lived) is read as the
// server's doing, not the fault's or the client's. Every behaviour here is one no fault of
// Toxiproxy causes: a fault resets, refuses, stalls or slows; it never writes a status, a
// header, an event id or a retry field. Resets and stalls are counted only where no fault can
// have made them: the server's response started and broke off inside an SSE event, or headers
// began and never ended.

// Behaviour is one kind of server conduct.
type Behaviour int

const (
	NoResponse    Behaviour = iota // took the request, sent no status line
	SlowHeaders                    // began its headers, never finished them (slowloris)
	StatusStorm                    // 5xx or 429 to a quarter of requests or more
	GetRefused                     // 405 to a GET stream
	GetConflict                    // 409 to a GET stream
	GzipBody                       // a body with a Content-Encoding nobody asked for
	HugeEvent                      // an SSE event over the cap
	ResetMidEvent                  // the connection broke inside an SSE event
	ChaoticIDs                     // event ids repeated, went backwards or were emptied
	HugeRetry                      // retry: longer than any reconnect should wait
	behaviours
)

// hugeRetryMS is the `retry:` over which a server's advice is named: ten minutes is longer than
// any load balancer keeps an idle stream, so no reconnect should wait for it.
const hugeRetryMS = 10 * 60 * 1000

// Conduct counts a server's conduct. Its zero value is ready; it is safe for concurrent use.
type Conduct struct {
	n         [behaviours]atomic.Int64
	responses atomic.Int64 // responses with a status line
	gets      atomic.Int64 // GET responses
	sizing    atomic.Bool  // an event over the cap is, or was, read on to learn its size
	// A GET stream's event is sized in the background (sizeAfter): one at a time, again after
	// an attempt its connection cut short (a fault, a relay's cut), at most maxSizings times.
	sized    atomic.Bool  // no more attempts: an event's end was found, or reading was bounded
	attempts atomic.Int32 // attempts begun
	pending  sync.WaitGroup
	mu       sync.Mutex
	first    [behaviours]string
	largest  int64 // the largest size learnt by sizeAfter
}

func (c *Conduct) note(b Behaviour, format string, args ...any) (first bool) {
	if c == nil {
		return false
	}
	if c.n[b].Add(1) == 1 {
		c.mu.Lock()
		c.first[b] = fmt.Sprintf(format, args...)
		c.mu.Unlock()
		return true
	}
	return false
}

// reword replaces the words of b's first instance (learnt more of it since).
func (c *Conduct) reword(b Behaviour, text string) {
	c.mu.Lock()
	c.first[b] = text
	c.mu.Unlock()
}

// Count is how often b was seen.
func (c *Conduct) Count(b Behaviour) int64 {
	if c == nil {
		return 0
	}
	return c.n[b].Load()
}

// Line is one behaviour in words, starting with "the server".
type Line struct {
	Behaviour Behaviour
	Text      string
}

// FaultCanMake says whether a fault of Toxiproxy can make b as well as the server: a reset
// inside an event (reset_peer, a restart), no response or headers cut short (latency, timeout,
// slicer). A run whose faults cut streams cannot blame the server for these.
func (b Behaviour) FaultCanMake() bool {
	return b == NoResponse || b == SlowHeaders || b == ResetMidEvent
}

// Lines say what the server did, one line a behaviour, the cause first. A status storm is
// named only when a quarter of the responses or more were one (three at least), and 405 or
// 409 on GET only when most GETs got it: an occasional 5xx, or a 409 while an old stream
// lingers after a drop, is no conduct to name.
func (c *Conduct) Lines() []Line {
	if c == nil {
		return nil
	}
	c.settle()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Line
	for b := range behaviours {
		n := c.n[b].Load()
		switch {
		case n == 0:
			continue
		case b == StatusStorm && (n < 3 || 4*n < c.responses.Load()),
			(b == GetRefused || b == GetConflict) && 2*n < c.gets.Load():
			continue
		}
		out = append(out, Line{b, fmt.Sprintf("the server %s %d time(s) (first: %s)", did[b], n, c.first[b])})
	}
	return out
}

var did = [behaviours]string{
	NoResponse:    "took a request and sent no response (no status line before the request timeout)",
	SlowHeaders:   "sent its response headers too slowly to finish (slowloris: headers begun, not ended, before the request timeout)",
	StatusStorm:   "answered with an error status (5xx or 429) to a quarter of its requests or more (a status storm)",
	GetRefused:    "refused the GET stream with HTTP 405 (it offers no stream of its own: no drop or replay of one can be measured)",
	GetConflict:   "answered the GET stream with HTTP 409 (a conflict: it says a stream of the session is already open)",
	GzipBody:      "sent a gzip body (Content-Encoding mcpchaos did not ask for; never inflated, read as its compressed bytes)",
	HugeEvent:     "sent an SSE event larger than mcpchaos reads",
	ResetMidEvent: "reset the connection in the middle of an SSE event",
	ChaoticIDs:    "gave chaotic SSE event ids (repeated, going backwards or emptied: a cursor cannot name a place in its stream)",
	HugeRetry:     "asked clients to wait an absurd time before reconnecting (retry:; mcpchaos waits at most its reconnect ceiling)",
}

// ConductOf is the conduct record of a client made by NewHTTPClient (nil for another).
func ConductOf(hc *http.Client) *Conduct {
	if hc == nil {
		return nil
	}
	if ht, ok := hc.Transport.(*headerTransport); ok {
		return ht.conduct
	}
	return nil
}

// Conduct is the conduct record of the endpoint's server.
func (ep *Endpoint) Conduct() *Conduct { return ConductOf(ep.HTTP) }

// observe sends req through rt, noting what the server did with it: no response or headers
// begun and never ended before the request's context ran out; the status; a Content-Encoding.
func (c *Conduct) observe(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	var began atomic.Int64 // when the first byte of the response came (UnixNano), 0: not yet
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { began.Store(time.Now().UnixNano()) }}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	start := time.Now()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(req.Context().Err(), context.DeadlineExceeded) {
			return nil, err
		}
		now := time.Now()
		waited := now.Sub(start).Round(time.Millisecond)
		// Headers that trickle began long before the deadline; a first byte just before it is
		// a late response (or a starved client), not a slowloris server.
		if b := began.Load(); b != 0 && now.Sub(time.Unix(0, b)) > now.Sub(start)/2 {
			c.note(SlowHeaders, "%s: headers begun, not ended after %v", req.Method, waited)
			return nil, &NoResponseError{Began: true, After: waited, Err: err}
		}
		c.note(NoResponse, "%s: no status line after %v", req.Method, waited)
		return nil, &NoResponseError{After: waited, Err: err}
	}
	c.responses.Add(1)
	if req.Method == http.MethodGet {
		c.gets.Add(1)
	}
	switch s := resp.StatusCode; {
	case s/100 == 5 || s == http.StatusTooManyRequests:
		c.note(StatusStorm, "%s: HTTP %d", req.Method, s)
	case req.Method == http.MethodGet && s == http.StatusMethodNotAllowed:
		c.note(GetRefused, "GET: HTTP 405")
	case req.Method == http.MethodGet && s == http.StatusConflict:
		c.note(GetConflict, "GET: HTTP 409")
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		c.note(GzipBody, "%s: HTTP %d, Content-Encoding: %.20s, Content-Type: %.40s", req.Method, resp.StatusCode, enc, resp.Header.Get("Content-Type"))
	}
	return resp, nil
}

// NoResponseError is a request whose response never came: no status line, or (Began) headers
// that began and did not end before the request's deadline (a slowloris server).
type NoResponseError struct {
	Began bool
	After time.Duration
	Err   error
}

func (e *NoResponseError) Error() string {
	if e.Began {
		return fmt.Sprintf("slowloris headers: the server began its response and had not finished its headers after %v (%v)", e.After, e.Err)
	}
	return fmt.Sprintf("no response: the server took the request and sent no status line in %v (%v)", e.After, e.Err)
}

func (e *NoResponseError) Unwrap() error { return e.Err }

// Timeout says it is a wait that ran out (net.Error).
func (e *NoResponseError) Timeout() bool { return true }

// Temporary is net.Error's.
func (e *NoResponseError) Temporary() bool { return false }

// watched yields events as seq does, noting chaotic ids and an absurd retry: on c.
func (c *Conduct) watched(seq iter.Seq2[Event, error], retry *atomic.Int64, what string) iter.Seq2[Event, error] {
	if c == nil {
		return seq
	}
	return func(yield func(Event, error) bool) {
		var seen []string // the ids of this stream so far, up to a bound
		last := ""
		defer func() {
			if retry != nil {
				if r := retry.Load(); r > hugeRetryMS {
					c.note(HugeRetry, "%s: retry: %d ms", what, r)
				}
			}
		}()
		for ev, err := range seq {
			if err == nil {
				c.checkID(what, last, ev.Cursor, &seen)
				last = ev.Cursor
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// checkID notes an id that repeats an earlier one of the stream, goes below the last (both
// numbers) or empties the cursor.
func (c *Conduct) checkID(what, last, id string, seen *[]string) {
	switch {
	case id == last:
		return // no id on this event: the cursor stays
	case id == "":
		c.note(ChaoticIDs, "%s: id %q, then an empty id", what, last)
	case slices.Contains(*seen, id):
		c.note(ChaoticIDs, "%s: id %q again after %q", what, id, last)
	default:
		a, errA := strconv.ParseInt(last, 10, 64)
		b, errB := strconv.ParseInt(id, 10, 64)
		if errA == nil && errB == nil && b < a {
			c.note(ChaoticIDs, "%s: id %d after %d", what, b, a)
		}
	}
	if id != "" && len(*seen) < 64 {
		*seen = append(*seen, id)
	}
}

// sizeRest reads on past an event over its cap, discarding, to say how large it was: up to
// the event's end, or to the first of budget bytes and the deadline. It returns the bytes read
// and whether the event's end was found. It holds no more than one buffer. A body that can be
// closed is closed at the deadline, so that a server that sends nothing more cannot hold the
// read: after an event over its cap a stream is over anyway (its parser lost its place).
func sizeRest(body io.Reader, budget int64, deadline time.Duration) (int64, bool) {
	n, ended, _ := sizeOn(body, budget, deadline)
	return n, ended
}

// sizeOn is sizeRest that also says whether the body broke off (ended, or failed) before the
// event's end, the budget and the deadline: its connection was cut short.
func sizeOn(body io.Reader, budget int64, deadline time.Duration) (n int64, ended, broke bool) {
	if c, ok := body.(io.Closer); ok {
		t := time.AfterFunc(deadline, func() { c.Close() })
		defer t.Stop()
	}
	buf := make([]byte, 32<<10)
	prevNL := false
	stop := time.Now().Add(deadline)
	for n < budget && time.Now().Before(stop) {
		k, err := body.Read(buf)
		for i := 0; i < k; i++ {
			nl := buf[i] == '\n'
			if nl && prevNL {
				return n + int64(i), true, false
			}
			if buf[i] != '\r' {
				prevNL = nl
			}
		}
		n += int64(k)
		if err != nil {
			return n, false, time.Now().Before(stop)
		}
	}
	return n, false, false
}

// hugeEvent names an event over maxEvent bytes by its size, read on (bounded, and within ctx's
// deadline) from body: "an SSE event of 64.0 MiB" when its end came, "of at least …" where the
// reading stopped. Only the first such event of c is read on; the others are cut at the cap.
func (c *Conduct) hugeEvent(ctx context.Context, err error, body io.Reader, maxEvent int, what string) error {
	var te *TooLargeError
	if !errors.As(err, &te) || body == nil {
		return err
	}
	if c != nil && (c.sized.Load() || c.attempts.Load() >= maxSizings || !c.sizing.CompareAndSwap(false, true)) {
		// Only one event of a client's conduct is read on at a time to learn its size (again
		// only when an attempt was cut short, at most maxSizings times): the line that names
		// the conduct shows one, and reading every one on made a hostile server's streams move
		// up to 64 MiB per stream and reconnect through Toxiproxy and the relays, whose copies
		// and collections held up the fault schedule (issue 20).
		c.note(HugeEvent, "%s: %s", what, te.sizeText())
		return err
	}
	wait := sizeTime // and no longer than the request may take
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, max(time.Until(dl), 0))
	}
	if c != nil {
		c.attempts.Add(1)
	}
	rest, ended, broke := sizeOn(body, sizeBudget, wait)
	size := int64(maxEvent) + rest
	te.Size, te.Ended = size, ended
	if c != nil {
		c.note(HugeEvent, "%s: %s", what, te.sizeText())
		c.learnt(what, size, ended)
		if !broke {
			c.sized.Store(true)
		}
		c.sizing.Store(false)
	}
	return err
}

// learnt rewords the conduct's line on events over the cap with a size learnt, if it is more
// than any learnt before, or the event's end was found.
func (c *Conduct) learnt(what string, size int64, ended bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.largest || ended {
		c.largest = size
		c.first[HugeEvent] = what + ": " + (&TooLargeError{Size: size, Ended: ended}).sizeText()
	}
}

// hugeEventLater is hugeEvent for a reader that must not wait (inspect's watch reports an
// event over its cap at once): the event is noted now, "at least" the cap, and its size is
// read on in a goroutine of its own, bounded as sizeRest is (and by the owner closing body),
// which rewords the note if it was the first.
func (c *Conduct) hugeEventLater(err error, body io.Reader, maxEvent int, what string) error {
	var te *TooLargeError
	if !errors.As(err, &te) || body == nil {
		return err
	}
	first := c.note(HugeEvent, "%s: %s", what, (&TooLargeError{Size: int64(maxEvent)}).sizeText())
	if first {
		go func() {
			rest, ended := sizeRest(body, sizeBudget, sizeTime)
			c.reword(HugeEvent, what+": "+(&TooLargeError{Size: int64(maxEvent) + rest, Ended: ended}).sizeText())
		}()
	}
	return err
}

// sizeAfter is hugeEvent for a GET stream, whose reader must not wait (its caller notes the
// event now, "at least" the cap): when no other attempt is under way or has succeeded, its
// size is read on in the background, bounded by sizeBudget and sizeLater (and by the stream's
// context: the run's end), rewording the note if it learnt more. It says whether it took body:
// release (which closes body) is then called by the sizer, not by the stream's owner.
// Reading past the stream's own use matters: a client that reads an event over the cap
// at a starved machine's pace learnt 1 to 10 MiB of a 64 MiB event in 2 s.
func (c *Conduct) sizeAfter(body io.Reader, release func(), maxEvent int, what string) bool {
	if c == nil || body == nil || c.sized.Load() || c.attempts.Load() >= maxSizings || !c.sizing.CompareAndSwap(false, true) {
		return false
	}
	c.attempts.Add(1)
	c.pending.Add(1)
	go func() {
		defer c.pending.Done()
		defer release()
		rest, ended, broke := sizeOn(body, sizeBudget, sizeLater)
		c.learnt(what, int64(maxEvent)+rest, ended)
		if !broke { // its end, the budget or the time bound: nothing more to learn
			c.sized.Store(true)
		}
		c.sizing.Store(false)
	}()
	return true
}

// settle waits for the sizes read on in the background, which end with the run (their streams'
// context), at most sizeSettle: the lines must say what was learnt.
func (c *Conduct) settle() {
	done := make(chan struct{})
	go func() {
		c.pending.Wait()
		close(done)
	}()
	t := time.NewTimer(sizeSettle)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// sizeBudget and sizeTime bound how far past its cap an event is read to learn its size;
// sizeLater bounds a GET stream's read on in the background (sizeAfter), which also ends
// with the run; sizeSettle is how long the lines wait for one to end; maxSizings bounds the
// attempts of one conduct.
const (
	sizeBudget = 64 << 20
	sizeTime   = 2 * time.Second
	sizeLater  = 30 * time.Second
	sizeSettle = 2 * time.Second
	maxSizings = 4
)

func (e *TooLargeError) sizeText() string {
	if e.Ended {
		return "an event of " + mib(e.Size)
	}
	return "an event of at least " + mib(e.Size) + " (reading stopped there)"
}

func mib(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Events is ReadEvents for a raw body (inspect's), noting on c what the events show: chaotic
// ids, an absurd retry:, an event over maxEvent (with its size, read on, bounded) and a
// connection broken inside an event. what names the body in the notes.
func (c *Conduct) Events(body io.Reader, maxEvent int, what string) iter.Seq2[Event, error] {
	var retry atomic.Int64
	retry.Store(-1)
	seq := c.watched(readEvents(body, maxEvent, &retry), &retry, what)
	return func(yield func(Event, error) bool) {
		for ev, err := range seq {
			if err != nil {
				err = c.classifyReadLater(err, body, maxEvent, what)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}
