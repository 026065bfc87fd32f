package inspect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/redact"
)

// Options say how to reach the server and how long to look.
type Options struct {
	Conn wire.Conn // the server (Dial unset: inspect talks to it directly)
	// TTL is the server's declared session TTL; 0 skips what needs one (open_stream_holds_session,
	// after_ttl). Inspect then waits TTL plus a margin.
	TTL time.Duration
	// Idle is how long an idle GET stream is watched for keepalives (default 10s).
	Idle time.Duration
	// Timeout bounds every request (default 10s).
	Timeout time.Duration
	// Protocol is the session-family version offered (default 2025-11-25).
	Protocol string
	// Progress, if set, gets a line per step.
	Progress func(string)
	// Tool names the tool to call (with a progress token) for event ids; "" lets inspect pick
	// up to three from tools/list, the likeliest to stream first, never one that looks
	// destructive. ToolArgs are its arguments; nil fills a minimal valid instance from its
	// inputSchema.
	Tool     string
	ToolArgs map[string]any
}

// ttlMargin is how long past the declared TTL inspect waits before it calls a session dead:
// servers sweep idle sessions periodically (mcp-go every max(TTL/2, 1s), so up to that late),
// and the margin must outlast such a sweep.
func ttlMargin(ttl time.Duration) time.Duration {
	return max(ttl/2, time.Second) + 500*time.Millisecond
}

// UnreachableError means the server could not be inspected at all.
type UnreachableError struct{ Err error }

func (e *UnreachableError) Error() string { return "could not inspect: " + e.Err.Error() }
func (e *UnreachableError) Unwrap() error { return e.Err }

type inspector struct {
	o      Options
	ep     *wire.Endpoint
	fp     *Fingerprint
	mu     sync.Mutex   // guards what the keepalive watch shares: fp's notes, violations, server requests, keepalive facts
	ids    atomic.Int64 // JSON-RPC ids of inspect's own requests
	tools  *[]toolInfo  // the tools to call for event ids, once listed
	capped atomic.Bool  // the watched stream was ended by inspect's event cap
}

// Inspect fingerprints the server. It returns an *UnreachableError when it could not inspect
// at all (unreachable, or initialize refused); whatever it could find otherwise is in the
// Fingerprint, with notes for what it could not.
//
// Everything it returns and every progress line passes the server's secrets (the connection's
// headers, the user-info and query of its URL) through redact on the way out, after decoding:
// a token the server quoted JSON-escaped or percent-encoded is plain by then.
func Inspect(ctx context.Context, o Options) (fp *Fingerprint, err error) {
	secrets := o.Conn.Secrets()
	if progress := o.Progress; progress != nil {
		o.Progress = func(s string) { progress(secrets.String(s)) }
	}
	defer func() { err = secrets.Out(err, fp) }() // redact's one exit

	in, err := newInspector(o)
	if err != nil {
		return nil, &UnreachableError{err}
	}
	defer in.ep.HTTP.CloseIdleConnections()
	if err := in.run(ctx); err != nil {
		return nil, err
	}
	in.fp.conduct(in.ep.Conduct())
	in.fp.judge()
	return in.fp, nil
}

func newInspector(o Options) (*inspector, error) {
	if o.Idle <= 0 {
		o.Idle = 10 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Protocol == "" {
		o.Protocol = wire.Protocol20251125
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	hc, err := wire.NewHTTPClient(o.Conn)
	if err != nil {
		return nil, err
	}
	return &inspector{o: o, fp: &Fingerprint{URL: redact.URL(o.Conn.URL), ProbeMethods: map[string]ProbeMethod{}},
		ep: &wire.Endpoint{URL: o.Conn.URL.String(), HTTP: hc, Protocol: o.Protocol, RequestTimeout: o.Timeout,
			MaxBody: maxBody, MaxEvent: maxEvent, ClientName: "mcpchaos-inspect"}}, nil
}

func (in *inspector) note(format string, args ...any) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.fp.Notes = append(in.fp.Notes, fmt.Sprintf(format, args...))
}

// violation records an answer that breaks the protocol (garbage where JSON-RPC or SSE was due).
func (in *inspector) violation(format string, args ...any) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.fp.ProtocolViolations) < maxViolations {
		in.fp.ProtocolViolations = append(in.fp.ProtocolViolations, fmt.Sprintf(format, args...))
	}
}

// maxViolations bounds the violations kept: a server that answers garbage answers it to
// every request.
const maxViolations = 16

func (in *inspector) nextID() int { return int(in.ids.Add(1)) }

func (in *inspector) run(ctx context.Context) error {
	fp := in.fp
	in.o.Progress("negotiating the protocol generation")
	n, err := in.ep.Negotiate(ctx)
	if err != nil {
		return &UnreachableError{fmt.Errorf("negotiating the protocol: %s", describe(nil, err))}
	}
	fp.SupportedVersions = n.Supported
	fp.Eras = eras(n.Supported, n.Generation.String())
	if len(n.Supported) > 0 {
		fp.PreferredProtocol = n.Supported[0] // server/discover lists its preference first
	}
	if err := in.chooseEra(&n); err != nil {
		return err
	}
	fp.Generation = n.Generation.String()
	if n.Generation == wire.Stateless {
		fp.NegotiatedProtocol = n.Protocol
		in.ep.Generation, in.ep.Protocol = wire.Stateless, n.Protocol
		s, _, _ := in.ep.Initialize(ctx)
		rep, err := s.ListTools(ctx)
		if err != nil || !rep.OK() {
			return &UnreachableError{fmt.Errorf("the server speaks %s, and refused tools/list in it: %s", n.Protocol, describe(rep, err))}
		}
		if len(fp.Eras) > 1 {
			in.note("inspected in the stateless revision %s, as --protocol asked: there are no sessions to kill in it, so the session facts are null; the server also speaks the session family (it named %v): inspect without --protocol 2026-07-28 for its sessions' facts", n.Protocol, n.Supported)
		} else {
			in.note("the server speaks only the stateless revision %s (it named %v): there are no sessions to kill, so the session facts are null", n.Protocol, n.Supported)
		}
		return nil
	}

	in.o.Progress("initializing")
	a, err := in.open(ctx)
	if err != nil {
		return &UnreachableError{err}
	}
	fp.NegotiatedProtocol = a.Protocol
	fp.SessionIDs = a.ID != ""

	// The keepalive watch runs beside everything else on a session of its own.
	var watch sync.WaitGroup
	watch.Go(func() { in.watchKeepalive(ctx, a) })
	defer watch.Wait()

	if r := in.call(ctx, a.Detached(""), "ping"); r != nil && r.violation == "" {
		fp.MissingSessionStatus = ptr(r.status)
		fp.missingSessionServed = r.served()
	}
	if !fp.SessionIDs {
		in.note("initialize gave no Mcp-Session-Id: the server keeps no sessions, so there is nothing to kill and the dead-session facts are null")
		return nil
	}

	// TTL sessions first, so that their wait overlaps the rest.
	var ttl *ttlWatch
	if in.o.TTL > 0 {
		ttl = in.startTTLWatch(ctx)
		defer func() {
			if a := ttl.active; a != nil { // ended by ttlFacts; here on every other way out
				a.stop()
				a.done.Wait()
			}
		}()
	}
	in.o.Progress("a second GET stream on one session")
	fp.DuplicateGetStatus = in.duplicateGet(ctx)

	in.o.Progress("killing a session with DELETE")
	if err := in.killByDelete(ctx); err != nil {
		return err
	}
	if ttl == nil {
		in.note("no --ttl given: open_stream_holds_session and the facts of a TTL death were not measured")
		return nil
	}
	wait := time.Until(ttl.start.Add(in.o.TTL + ttlMargin(in.o.TTL)))
	in.o.Progress(fmt.Sprintf("waiting %s for the declared TTL (%s) to pass", wait.Round(time.Millisecond), in.o.TTL))
	t := time.NewTimer(wait)
	select {
	case <-ctx.Done():
		t.Stop()
		ttl.stream.close()
		return ctx.Err()
	case <-t.C:
	}
	in.ttlFacts(ctx, ttl, fp.DeadStatus.KilledBy == "")
	return nil
}

// ttlWatch is the sessions left to die by the TTL: one idle (with a trail of its event ids),
// one held by an open GET stream.
type ttlWatch struct {
	idle, held *wire.Session
	active     *activeWatch // kept busy: sliding or absolute (ttlmode.go)
	trail      *trail
	stream     *rawStream
	start      time.Time
}

func (in *inspector) startTTLWatch(ctx context.Context) *ttlWatch {
	w := &ttlWatch{}
	var err error
	if w.idle, err = in.open(ctx); err == nil {
		w.trail = in.acquire(ctx, w.idle)
	}
	if w.held, err = in.open(ctx); err == nil {
		if w.stream = in.openStream(ctx, w.held, ""); w.stream.stream() {
			w.stream.hold()
		}
	}
	w.active = in.startActive(ctx)
	w.start = time.Now()
	return w
}

// shortWait is how long inspect waits for events to arrive on a stream: short enough that a
// session with a short declared TTL survives the wait.
func (in *inspector) shortWait() time.Duration {
	if in.o.TTL > 0 {
		return min(500*time.Millisecond, in.o.TTL/4)
	}
	return 500 * time.Millisecond
}

// open initializes a session.
func (in *inspector) open(ctx context.Context) (*wire.Session, error) {
	s, rep, err := in.ep.Initialize(ctx)
	if err != nil {
		return nil, fmt.Errorf("initialize: %s", describe(rep, err))
	}
	return s, nil
}

// describe says what an initialize or call got.
func describe(rep *wire.Reply, err error) string {
	switch {
	case err != nil && rep != nil && rep.Status != 0:
		return fmt.Sprintf("HTTP %d: %v", rep.Status, err)
	case err != nil && errors.As(err, new(*wire.NoResponseError)):
		return fmt.Sprintf("%v; is it an MCP endpoint, and is it alive?", err)
	case err != nil && timedOut(err):
		return fmt.Sprintf("no response: the server took the request and sent no status line before the timeout (%v); is it an MCP endpoint, and is it alive?", err)
	case err != nil && errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("connection refused: nothing listens there (%v)", err)
	case err != nil:
		return err.Error()
	case rep == nil:
		return "no answer"
	case rep.RPCError != nil:
		return fmt.Sprintf("HTTP %d, JSON-RPC error %d: %s", rep.Status, rep.RPCError.Code, rep.RPCError.Message)
	default:
		return fmt.Sprintf("HTTP %d %s", rep.Status, rep.Body)
	}
}

// timedOut says err is a wait that ran out, not an answer.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// chooseEra honours --protocol: the stateless revision when asked for and offered (an error
// naming what the server offers when not), else the session family the negotiation found.
func (in *inspector) chooseEra(n *wire.Negotiated) error {
	if in.o.Protocol != wire.ProtocolStateless || n.Generation == wire.Stateless {
		return nil
	}
	if !slices.Contains(n.Supported, wire.ProtocolStateless) {
		named := "it does not answer server/discover, so it speaks the session family only"
		if len(n.Supported) > 0 {
			named = fmt.Sprintf("server/discover named %v", n.Supported)
		}
		return &UnreachableError{fmt.Errorf("--protocol %s: the server does not speak the stateless revision (%s); inspect it without --protocol, or with a session-family version", wire.ProtocolStateless, named)}
	}
	n.Generation, n.Protocol = wire.Stateless, wire.ProtocolStateless
	return nil
}
