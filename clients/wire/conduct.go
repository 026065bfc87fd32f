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
	getsOK    atomic.Int64 // GET responses 200: the server did offer a stream
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
// lingers after a drop, is no conduct to name. 405 on GET is named only when no GET was ever
// answered 200: a server that served streams and then refuses them changed under the run (a
// rolling upgrade to the stateless era, counted as wrong-era requests), it did not lack them.
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
			(b == GetRefused || b == GetConflict) && 2*n < c.gets.Load(),
			b == GetRefused && c.getsOK.Load() > 0:
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
		if resp.StatusCode == http.StatusOK {
			c.getsOK.Add(1)
		}
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
