package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// Generation is the family of protocol revisions a server speaks.
type Generation int

const (
	// SessionFamily is 2025-03-26 … 2025-11-25: initialize, Mcp-Session-Id, a GET stream,
	// Last-Event-ID resumption. Everything the seed is about.
	SessionFamily Generation = iota
	// Stateless is the 2026-07-28 revision: no initialize, no session, no GET stream, no
	// resumption. A broken response stream loses its request, which the client must re-issue
	// with a new id.
	Stateless
)

func (g Generation) String() string {
	if g == Stateless {
		return "stateless"
	}
	return "session"
}

// ProtocolStateless is the stateless revision this client speaks.
const ProtocolStateless = "2026-07-28"

// Negotiated is what Negotiate learnt of a server.
type Negotiated struct {
	Generation Generation
	// Protocol is ProtocolStateless for a stateless server; for the session family it is left
	// to initialize.
	Protocol string
	// Supported lists the versions the server named in server/discover, if it knows that method.
	Supported []string
}

// Negotiate learns which generation the server speaks, before any session: it asks
// server/discover (the stateless revision's handshake). A server that names no session-family
// version this client speaks, and names the stateless one, is Stateless; any other answer
// (including a server that does not know server/discover) means the session family, whose
// version initialize negotiates. Only a failure to reach the server is an error.
func (ep *Endpoint) Negotiate(ctx context.Context) (Negotiated, error) {
	versions, err := ep.Discover(ctx)
	if err != nil {
		return Negotiated{}, err
	}
	n := Negotiated{Generation: SessionFamily, Protocol: ep.Protocol, Supported: versions}
	if len(versions) == 0 || slices.ContainsFunc(versions, Supported) {
		return n, nil
	}
	if slices.Contains(versions, ProtocolStateless) {
		n.Generation, n.Protocol = Stateless, ProtocolStateless
		return n, nil
	}
	return n, &ProtocolError{Msg: fmt.Sprintf("the server speaks only %s, none of which this client speaks (%s, %s, %s, %s)",
		strings.Join(versions, ", "), Protocol20251125, Protocol20250618, Protocol20250326, ProtocolStateless)}
}

// Discover sends server/discover as the stateless revision does and returns the versions the
// server says it supports; none (and no error) when the server does not answer it with a
// result, as session-family servers do not.
func (ep *Endpoint) Discover(ctx context.Context) ([]string, error) {
	s := &Session{ep: ep, Protocol: ProtocolStateless, Stateless: true}
	rep, err := s.Call(ctx, "server/discover", nil)
	if err != nil {
		if rep != nil {
			return nil, nil // the server answered, in a way of its own: not a stateless server
		}
		return nil, err
	}
	if !rep.OK() {
		return nil, nil
	}
	var res struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(rep.Result, &res) != nil {
		return nil, nil
	}
	return res.SupportedVersions, nil
}

// withMeta returns params as a JSON object carrying the per-request _meta that the stateless
// revision requires in place of initialize: protocol version, client info, capabilities.
func (s *Session) withMeta(params any) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &obj); err != nil {
			return nil, fmt.Errorf("params of a stateless request must be an object: %w", err)
		}
	}
	meta := map[string]json.RawMessage{}
	if m, ok := obj["_meta"]; ok {
		_ = json.Unmarshal(m, &meta)
	}
	info, _ := json.Marshal(&mcp.Implementation{Name: s.ep.ClientName, Version: "1"})
	meta[mcp.MetaKeyProtocolVersion], _ = json.Marshal(s.Protocol)
	meta[mcp.MetaKeyClientInfo] = info
	meta[mcp.MetaKeyClientCapabilities] = json.RawMessage("{}")
	obj["_meta"], _ = json.Marshal(meta)
	return json.Marshal(obj)
}

// statelessHeaders sets the headers the stateless revision routes by.
func statelessHeaders(req *http.Request, method string, params any) {
	req.Header.Set("Mcp-Method", method)
	if p, ok := params.(*mcp.CallToolParams); ok && p.Name != "" {
		req.Header.Set("Mcp-Name", p.Name)
	}
}

// statelessDriver runs clients against a stateless server (the 2026-07-28 revision): the wire
// session's hold (initialize returns a request context; there is no stream to hold) and a
// tick of its own.
type statelessDriver struct{}

func (statelessDriver) hold(ctx context.Context, c *Client, wg *sync.WaitGroup) {
	wireDriver{}.hold(ctx, c, wg)
}

func (statelessDriver) tick(ctx context.Context, c *Client, k int) { c.tickStateless(ctx, k) }

func (statelessDriver) notObservable() []string { return SessionOnlyMetrics() }

// tickStateless is a request loop's turn against a stateless server. There is no session to
// lose, so the seed's scenarios do not apply; what does is the revision's own rule: a request
// whose response a fault cuts is lost, and the client re-issues it with a new request id.
// Both policies follow that rule (up to the group's retries); what is measured is how many
// were lost, re-issued, and how long the application waited for their results.
func (c *Client) tickStateless(ctx context.Context, k int) {
	h := c.sessionFor(k)
	if h == nil {
		return
	}
	cfg := &c.f.cfg
	args, err := c.f.arguments(ctx, c, c.f.listTools(h.s))
	if err != nil {
		if ctx.Err() == nil {
			c.f.argsFailed(err)
		}
		return
	}
	var first time.Time
	lost := false
	for attempt := 1; ; attempt++ {
		sent := time.Now()
		if attempt == 1 {
			first = sent
		}
		if lost {
			c.f.rec.Inc(metrics.RequestsReissued)
		}
		rep, err := c.callTool(ctx, h.s, args)
		if ctx.Err() != nil {
			return
		}
		if err == nil && rep.OK() {
			c.answered(ctx, rep, sent)
			if lost {
				c.f.rec.Record(metrics.RecoveryLatency, c.idx, time.Since(first))
			}
			return
		}
		c.f.callFailed(rep, err, false)
		// Sent and then cut (reset, timeout, a stream that ended before its response): lost in
		// flight. A refused connection never carried the request.
		inFlight := err != nil && rep == nil && Kind(err) != metrics.ErrConnect || err != nil && rep != nil && rep.Status/100 == 2
		if inFlight {
			c.f.rec.Inc(metrics.RequestsLost)
			lost = true
		}
		if err == nil || attempt > reissues(c.f.policy) {
			c.f.surfaced(rep, err, false)
			return
		}
		if !sleep(ctx, cfg.RetryBackoff<<min(attempt-1, 6)) {
			return
		}
	}
}

// SessionOnlyMetrics are the metrics that mean nothing without sessions: against a stateless
// server they stay zero because there is nothing to count, not because all was well.
func SessionOnlyMetrics() []string {
	return []string{"sessions_started", "drops", "replays_ok", "replays_dead", "replays_unknown_cursor", "probes_sent",
		"sessions_dead", "sessions_dead_detected", "misattributed_errors", "dead_session_requests",
		"retries_against_dead", "stale_events_applied", "events_quarantined", "events_applied",
		"reinit_collisions", "resyncs", "retry_amplification", "false_healthy_seconds",
		"probe_latency", "reconnect_latency", "detection_delay"}
}

// Name is the group's name.
func (f *Fleet) Name() string { return f.cfg.Name }

// NotObservable lists the metrics this group's numbers cannot speak for: the session metrics
// against a stateless server, the SDK's internals for a gosdk group.
func (f *Fleet) NotObservable() []string { return f.drv.notObservable() }

// reissues is how many times a lost request is re-issued: the group's retries.
func reissues(p Policy) int {
	switch p := p.(type) {
	case Naive:
		return p.Retries
	case Probe:
		return p.Retries
	}
	return 3
}
