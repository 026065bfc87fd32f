package wire

import (
	"context"
	"crypto/tls"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// Dispatch lag is the load generator's own part of one request/response exchange, the part a
// raw latency sample carries that is not the server's nor the network's: from the moment the
// session decided to send (post began) to the moment net/http had written the request, less
// the time spent connecting (a dial and a TLS handshake are the network's and the server's);
// and from the moment the reply's first byte was read off the connection (net/http's read
// loop) to the moment the sending goroutine had the response. Both stretches grow when the
// generator's goroutines wait for a CPU. What it cannot see: how long the reply's bytes lay in
// the socket before the read loop got to them, and a body read after the headers
// (docs/metrics.md, "Generator").

// exchangeTimes are the instants of one exchange that dispatch lag is computed from; zero
// when net/http did not report them (then that stretch counts nothing).
type exchangeTimes struct {
	start     time.Time     // post began
	connect   time.Duration // dialling and TLS handshakes while the request waited for its connection
	wrote     time.Time     // net/http wrote the request (httptrace WroteRequest)
	firstByte time.Time     // the reply's first byte was read (httptrace GotFirstResponseByte)
	returned  time.Time     // the sending goroutine had the response
}

// lag is the exchange's dispatch lag (see above), never negative and never more than the
// exchange took.
func (e exchangeTimes) lag() time.Duration {
	if e.start.IsZero() || e.returned.Before(e.start) {
		return 0
	}
	var d time.Duration
	if !e.wrote.IsZero() {
		wrote := e.wrote
		if !e.firstByte.IsZero() && e.firstByte.Before(wrote) { // the server answered before the hook ran
			wrote = e.firstByte
		}
		d += max(0, wrote.Sub(e.start)-e.connect)
	}
	if !e.firstByte.IsZero() && !e.returned.Before(e.firstByte) {
		d += e.returned.Sub(e.firstByte)
	}
	return min(d, e.returned.Sub(e.start))
}

// exchangeTrace collects an exchange's instants from net/http's hooks, which run on the
// transport's goroutines.
type exchangeTrace struct {
	mu        sync.Mutex
	now       func() time.Time
	t         exchangeTimes
	dialFrom  time.Time
	tlsFrom   time.Time
	connected bool // the request has its connection: later dials are another request's
}

func newExchangeTrace(now func() time.Time) *exchangeTrace {
	e := &exchangeTrace{now: now}
	e.t.start = now()
	return e
}

// hooks is the httptrace that fills e.
func (e *exchangeTrace) hooks() *httptrace.ClientTrace {
	at := func(f func(time.Time)) {
		now := e.now()
		e.mu.Lock()
		f(now)
		e.mu.Unlock()
	}
	return &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { at(func(time.Time) { e.connected = true }) },
		ConnectStart: func(string, string) {
			at(func(t time.Time) { e.dialFrom = t })
		},
		ConnectDone: func(string, string, error) {
			at(func(t time.Time) {
				if !e.connected && !e.dialFrom.IsZero() {
					e.t.connect += t.Sub(e.dialFrom)
				}
			})
		},
		TLSHandshakeStart: func() { at(func(t time.Time) { e.tlsFrom = t }) },
		TLSHandshakeDone: func(tls.ConnectionState, error) {
			at(func(t time.Time) {
				if !e.connected && !e.tlsFrom.IsZero() {
					e.t.connect += t.Sub(e.tlsFrom)
				}
			})
		},
		WroteRequest:         func(httptrace.WroteRequestInfo) { at(func(t time.Time) { e.t.wrote = t }) },
		GotFirstResponseByte: func() { at(func(t time.Time) { e.t.firstByte = t }) },
	}
}

// done notes that the sending goroutine has the response, and is the exchange's dispatch lag.
func (e *exchangeTrace) done() time.Duration {
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.t.returned = now
	return e.t.lag()
}

// DispatchLag adds up the dispatch lag of every exchange sent with a context that carries it
// (WithDispatchLag): a request loop's turn may send several requests (retries, a probe).
type DispatchLag struct{ ns atomic.Int64 }

// Total is the lag added so far.
func (d *DispatchLag) Total() time.Duration { return time.Duration(d.ns.Load()) }

func (d *DispatchLag) add(v time.Duration) { d.ns.Add(int64(v)) }

type dispatchKey struct{}

// WithDispatchLag makes every exchange sent with ctx add its dispatch lag to d.
func WithDispatchLag(ctx context.Context, d *DispatchLag) context.Context {
	return context.WithValue(ctx, dispatchKey{}, d)
}

// noteLag ends the exchange: its lag goes to the context's DispatchLag, if any, and is returned.
func noteLag(ctx context.Context, e *exchangeTrace) time.Duration {
	lag := e.done()
	if d, ok := ctx.Value(dispatchKey{}).(*DispatchLag); ok {
		d.add(lag)
	}
	return lag
}
