package inspect

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/mcpwire"
)

// What counts as a keepalive on an idle stream: traffic that recurs by itself. An SSE comment
// (": keepalive"), a server ping request (mcp-go's heartbeat) or a notification qualifies; any
// other server request (roots/list, sampling, elicitation) is answered and counted apart,
// never taken for a keepalive, and a priming event only opens the stream.
const (
	keepaliveComment      = "comment"
	keepalivePing         = "ping"
	keepaliveNotification = "notification"
)

// openingFlush is how soon after the headers an event still counts as part of the opening. A
// comment is told by its place instead (the stream's first line, as the Go SDK's ": ok"):
// under load it can arrive later than this, and be taken for a keepalive.
const openingFlush = 50 * time.Millisecond

type arrival struct {
	at   time.Time
	kind string
}

// watchTries bounds the sessions the keepalive watch opens: with a declared TTL, a session that
// died of it before or while its stream was watched (on a loaded machine or server, the pings
// came too late) tells nothing about the stream, and a fresh one may.
const watchTries = 2

// watchKeepalive holds a GET stream of a session of its own, idle, and times what arrives. With
// a declared TTL it pings the session on POST meanwhile, so that what is watched is the
// stream, not the TTL. A stream the server ends is reported closed at that time.
func (in *inspector) watchKeepalive(ctx context.Context, s *wire.Session) {
	for try := 1; in.watchStream(ctx, s) && ctx.Err() == nil; try++ {
		in.mu.Lock()
		in.fp.KeepaliveSessionsDied++
		in.mu.Unlock()
		if try == watchTries {
			in.note("keepalive watch: each of the %d sessions watched died of the TTL while watched, though pinged every third of it (the pings came late: a loaded machine or server); the keepalive is unknown", watchTries)
			return
		}
		var err error
		if s, err = in.open(ctx); err != nil {
			in.note("keepalive watch: %v", err)
			return
		}
		defer s.Delete(ctx)
	}
}

// watchStream is one watch of s's GET stream; died says s was found dead of its TTL instead
// (nothing recorded).
func (in *inspector) watchStream(ctx context.Context, s *wire.Session) (died bool) {
	rs := in.openStream(ctx, s, "")
	if !rs.stream() {
		return in.diedOfTTL(ctx, s)
	}
	defer rs.close()
	opened := time.Now()
	arrivals := make(chan arrival, 64)
	go in.readIdle(ctx, s, rs.resp.Body, arrivals)
	stopPings := in.keepSessionAlive(ctx, s)
	defer stopPings()
	timer := time.NewTimer(in.o.Idle)
	defer timer.Stop()
	var seen []arrival
	for len(seen) < 2 {
		select {
		case a, ok := <-arrivals:
			if !ok {
				if in.capped.Load() { // inspect's cap ended it, not the server
					in.keepaliveCut(opened, seen)
					return false
				}
				if in.diedOfTTL(ctx, s) {
					return true
				}
				in.keepaliveSeen(opened, seen, ptr(time.Since(opened).Milliseconds()))
				return false
			}
			if a.kind != keepaliveComment && a.at.Sub(opened) < openingFlush {
				continue // written with the opening
			}
			seen = append(seen, a)
		case <-timer.C:
			if len(seen) == 0 && in.diedOfTTL(ctx, s) {
				return true // the session died while watched: its stream told nothing
			}
			in.keepaliveSeen(opened, seen, nil)
			return false
		}
	}
	in.keepaliveSeen(opened, seen, nil)
	return false
}

// diedOfTTL says, with a declared TTL, that s is refused as dead: the pings that keep it alive
// did not (a loaded machine or server). Without one, a death is the server's regime.
func (in *inspector) diedOfTTL(ctx context.Context, s *wire.Session) bool {
	if in.o.TTL <= 0 {
		return false
	}
	st, served := in.ping(ctx, s)
	return st != nil && isFalse(served)
}

// keepaliveSeen records the interval of what arrived: the gap between the first two arrivals,
// or from the opening to the only one; closedMS when the server ended the stream.
func (in *inspector) keepaliveSeen(opened time.Time, seen []arrival, closedMS *int64) {
	in.mu.Lock()
	defer in.mu.Unlock()
	fp := in.fp
	fp.KeepaliveWatchedMS = in.o.Idle.Milliseconds()
	fp.StreamClosedMS = closedMS
	switch len(seen) {
	case 0:
		return
	case 1:
		fp.StreamKeepaliveMS = ptr(seen[0].at.Sub(opened).Milliseconds())
	default:
		fp.StreamKeepaliveMS = ptr(seen[1].at.Sub(seen[0].at).Milliseconds())
	}
	fp.KeepaliveKind = seen[0].kind
}

// readIdle reads an idle stream until it ends, sending what counts as a keepalive and
// answering server requests; it closes arrivals when the stream ends.
func (in *inspector) readIdle(ctx context.Context, s *wire.Session, body io.Reader, arrivals chan<- arrival) {
	defer close(arrivals)
	send := func(kind string) {
		select {
		case arrivals <- arrival{time.Now(), kind}:
		default:
		}
	}
	sniff := &commentSniffer{r: body, comment: func() { send(keepaliveComment) }}
	for ev, err := range in.ep.Conduct().Events(sniff, maxEvent, "GET stream") {
		if err != nil {
			if tooLarge(err) {
				in.capped.Store(true)
				in.violation("GET stream: an event longer than %d bytes, inspect's cap", maxEvent)
			}
			return
		}
		if ev.Data == "" {
			continue
		}
		m, err := mcpwire.Decode([]byte(ev.Data))
		if err != nil {
			in.violation("GET stream: an event that is not JSON-RPC: %q", cut([]byte(ev.Data)))
			continue
		}
		req, ok := m.(*jsonrpc.Request)
		switch {
		case !ok:
		case !req.IsCall():
			send(keepaliveNotification)
		case req.Method == "ping":
			in.answerServer(ctx, s, req)
			send(keepalivePing)
		default:
			in.answerServer(ctx, s, req)
		}
	}
}

// keepSessionAlive pings s every third of the declared TTL until stopped; without a TTL it
// does nothing.
func (in *inspector) keepSessionAlive(ctx context.Context, s *wire.Session) (stop func()) {
	if in.o.TTL <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(in.o.TTL / 3)
		defer t.Stop()
		for id := 1000; ; id++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				rctx, rcancel := context.WithTimeout(ctx, in.o.Timeout)
				in.exchange(rctx, s, id, "ping", nil)
				rcancel()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// commentSniffer passes a stream through while reporting each SSE comment line (one that
// starts with ':') but a first line: go-sse's parser drops comments, and they are the usual
// keepalive.
type commentSniffer struct {
	r         io.Reader
	comment   func()
	lineStart bool
	started   bool
	cr        bool
	lines     int // lines ended so far
}

func (c *commentSniffer) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for _, b := range p[:n] {
		if !c.started {
			c.started, c.lineStart = true, true
		}
		switch {
		case b == '\n' && c.cr:
			c.cr = false
		case b == '\r' || b == '\n':
			c.cr, c.lineStart = b == '\r', true
			c.lines++
		default:
			if c.lineStart && b == ':' && c.lines > 0 { // a comment first of all opens the stream
				c.comment()
			}
			c.cr, c.lineStart = false, false
		}
	}
	return n, err
}

// keepaliveCut records a watch that inspect's own event cap ended.
func (in *inspector) keepaliveCut(opened time.Time, seen []arrival) {
	in.keepaliveSeen(opened, seen, nil)
	in.mu.Lock()
	defer in.mu.Unlock()
	in.fp.StreamCutMS = ptr(time.Since(opened).Milliseconds())
}

// tooLarge says a read ended at a cap, not at the server's end.
func tooLarge(err error) bool {
	var te *wire.TooLargeError
	return errors.As(err, &te) || errors.Is(err, bufio.ErrTooLong) || strings.Contains(err.Error(), "too large") || strings.Contains(err.Error(), "too long")
}
