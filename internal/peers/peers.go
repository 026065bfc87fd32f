// Package peers starts real MCP servers of other implementations on loopback, for tests that
// must meet the servers a team really runs: the official Go SDK, mark3labs/mcp-go (plain, and
// with an event log that outlives its sessions: the seed's regime in a real SDK), and the
// TypeScript SDK under node (ts.go); and the regimes a run must recognise for what they are
// (regimes of real servers, not of the seed): mcp-go without session ids
// (MCPGoStateless) and with ids it never checks (MCPGoIDs: silent substitution), the TS SDK
// answering 400 to unknown sessions (TS400), the official everything server (Everything: no
// TTL, 400), and the Go SDK's stateless 2026-07-28 server (GoSDKStateless), which counts the
// executions of each logical call. Two more mcp-go regimes are there for inspect's tests: a
// ping heartbeat on the GET stream (MCPGoHeartbeat) and an event store shared by all sessions
// that replays by ids sorted as strings (MCPGoSortedStore).
//
// Every peer but MCPGoSortedStore (whose only tool is burst) offers the same tools, with the
// schemas such servers have (required properties, bounds, enums, no extra properties), so a
// client that sends arguments a tool does not take fails here as it would in staging:
//
//	lookup_order    {order_id: string (required), quantity: integer >= 1 (required), priority: "low"|"high"}
//	report_progress {steps: integer 1..20 (required)}: sends notifications/progress when given a
//	                progressToken; the Go SDK and TS SDK peers then send the client server
//	                requests (ping, and roots/list when the client offers roots) and count those
//	                left unanswered
//	slow_query      {query: string (required), delay_ms: integer 0..5000}: answers after a delay
//
// The mcp-go peers run in a process of their own (mcpgopeer's command, built without the race
// detector; its package doc says why), the TypeScript ones under node; the Go SDK's run in the
// test's process.
//
// It is for tests only: it never listens beyond 127.0.0.1, and every server ends with its test.
package peers

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/loopback"
)

// Options shape a peer's regime.
type Options struct {
	// SessionTTL is how long a session may idle before the server ends it; 0 = never.
	SessionTTL time.Duration
	// Notify is how often the server sends every session a notification on its standalone
	// stream (a log message); 0 = never. The Go SDK sends log messages only to clients that
	// set a level (logging/setLevel).
	Notify time.Duration
	// EventStoreMaxBytes caps the Go SDK peer's MemoryEventStore (SetMaxBytes): past it the
	// store purges the oldest events, of live sessions too, and a resume from a purged cursor
	// is answered 400 "failed to replay events". 0 = the SDK's default (10 MiB).
	EventStoreMaxBytes int
	// EventStoreMaxAge trims the MCPGo and TS peers' event stores by age (0 = never): an event
	// that old is forgotten while its session lives, as a store bounded in production forgets
	// it (a Redis stream trimmed by MINID), and a resume from it is one from an unknown id,
	// which both servers answer 400 (mcp-go "Unknown Last-Event-ID", the TS SDK "Invalid event
	// ID format").
	EventStoreMaxAge time.Duration
}

// Server is a running peer.
type Server struct {
	Name string // "go-sdk", "go-sdk-stateless", "ts-sdk", "ts-sdk-400", "everything", or one of mcpgopeer.Modes
	URL  string // the MCP endpoint
	// stats reads the server's counts of requests it sent to clients.
	stats func() Stats
	// deaths reads the server's own record of when a session died (mcp-go's stateful modes).
	deaths func(id string) (time.Time, bool)
}

// DeadSince is the server's own record of when the session id died (its sweeper or a DELETE
// ended it), for the servers that keep one (MCPGo, MCPGoRetained, MCPGoSortedStore); ok is
// false while the session lives, and always for the others.
func (s *Server) DeadSince(id string) (at time.Time, ok bool) {
	if s.deaths == nil {
		return time.Time{}, false
	}
	return s.deaths(id)
}

// Stats counts the requests a server sent its clients (ping, roots/list): those that got no
// answer in time though the client was there to get them (an error answer is an answer), and
// those abandoned because the client went away (a fault cut its call, or the session ended).
type Stats struct {
	ServerRequests int64 `json:"server_requests"`
	Unanswered     int64 `json:"unanswered"`
	Abandoned      int64 `json:"abandoned"`
	// Executions counts the tools/call the server ran; Duplicates those it ran again under a
	// logical call (mcpwire.CallKey) it had already run (GoSDKStateless only).
	Executions int64 `json:"executions,omitempty"`
	Duplicates int64 `json:"duplicates,omitempty"`
	// Notified counts the notifications/tools/list_changed the server sent on listen streams
	// (subscriptions/listen; GoSDKStateless only).
	Notified int64 `json:"notified,omitempty"`

	// The everything server's own record (Everything only), counted from its own log lines:
	// sessions it initialized, sessions it forgot (their transport closed: it answers them 400
	// from then on), DELETEs it received, GET streams it opened, resumes with Last-Event-ID it
	// answered, every HTTP status it answered, by method ("POST 400"), and the refusals (4xx,
	// 5xx) it answered to a session id it had issued.
	SessionsInitialized int64            `json:"sessions_initialized,omitempty"`
	SessionsForgotten   int64            `json:"sessions_forgotten,omitempty"`
	Deletes             int64            `json:"deletes,omitempty"`
	GetStreams          int64            `json:"get_streams,omitempty"`
	Resumes             int64            `json:"resumes,omitempty"`
	Statuses            map[string]int64 `json:"statuses,omitempty"`
	RefusedIssued       int64            `json:"refused_issued,omitempty"`
	// Refusals are those by "METHOD STATUS live|forgotten: message" (forgotten: the session
	// had been forgotten; live: it was refused for another reason, e.g. a body cut short).
	Refusals map[string]int64 `json:"refusals,omitempty"`
	// GetEventsNotJSONRPC counts the events with data "{}" it wrote on GET streams: its event
	// store replays the transport's priming events ({}) of every stream after the cursor.
	GetEventsNotJSONRPC int64 `json:"get_events_not_jsonrpc,omitempty"`
}

// Stats returns the server's counts so far.
func (s *Server) Stats() Stats { return s.stats() }

// counter is the Go peers' Stats.
type counter struct{ sent, unanswered, abandoned atomic.Int64 }

func (c *counter) stats() Stats {
	return Stats{ServerRequests: c.sent.Load(), Unanswered: c.unanswered.Load(), Abandoned: c.abandoned.Load()}
}

// ask counts one server request by its outcome.
func (c *counter) ask(o outcome) {
	c.sent.Add(1)
	switch o {
	case unanswered:
		c.unanswered.Add(1)
	case abandoned:
		c.abandoned.Add(1)
	}
}

type outcome int

const (
	answered   outcome = iota // a result or a JSON-RPC error
	unanswered                // no answer within askTimeout
	abandoned                 // the call that asked was cancelled: the client went away
)

// serve serves h on loopback until the test ends.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	return "http://" + loopback.Serve(t, h, nil) + "/mcp"
}

// notifyLoop calls send every d until the test ends.
func notifyLoop(t testing.TB, d time.Duration, send func(context.Context)) {
	if d <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				send(ctx)
			}
		}
	}()
}

// askTimeout bounds a server request's wait for the client's answer.
const askTimeout = 5 * time.Second
