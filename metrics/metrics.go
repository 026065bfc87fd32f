// Package metrics holds what a run measures: the counters and HdrHistograms defined in docs/metrics.md, per
// client group.
//
// Workers only bump atomics or record into one of a group's histogram shards (picked by the
// caller's key, so two sessions rarely share one); nothing on a hot path takes a group-wide
// lock. Shards are merged when a Snapshot is taken. The package knows nothing about sessions,
// policies or exports: it counts what it is told.
package metrics

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Counter names one of the counters (docs/metrics.md).
type Counter int

const (
	SessionsStarted          Counter = iota // initialize succeeded (first sessions and re-initializations)
	Drops                                   // a GET stream ended while the client still held its session
	ReplaysOK                               // replay GET answered 200
	ReplaysDead                             // replay GET answered a dead status (404/410 by default)
	ReplaysUnknownCursor                    // replay GET refused the cursor (any other status)
	ProbesSent                              // liveness probes sent after a replay
	SessionsDead                            // session deaths the client ran into (sent at least one request to)
	SessionsDeadDetected                    // deaths the client classified as session deaths
	MisattributedErrors                     // dead-session failures surfaced as tool failures
	LiveSessionsDeclaredDead                // live sessions a client abandoned on a dead status: the reverse misattribution
	DeadSessionRequests                     // requests sent carrying the id of an already dead session
	RetriesAgainstDead                      // the part of those that were retries
	StaleEventsApplied                      // replayed events of a dead session applied to client state
	EventsQuarantined                       // such events withheld, as the decision rule demands
	EventsApplied                           // all events applied to client state (live and stale)
	ReinitCollisions                        // requests sent with an old id after the client re-initialized
	Resyncs                                 // cursor refused on a live session: fresh stream, no re-initialize
	ReconnectsRefused                       // GET reconnects refused as a stream already attached (409; 400 not a dead status, to a GET without a cursor)
	ToolCallsOK                             // tool calls that returned a result
	ToolCallsFailed                         // tool calls surfaced as failures (after retries)
	RequestsLost                            // stateless revision: requests whose response a fault cut in flight
	RequestsReissued                        // stateless revision: those re-sent with a new request id
	ToolErrors                              // tool calls whose result said isError: the tool's own answer
	ServerRequests                          // requests of the server (ping, roots/list, ...) the client answered
	CallsSkipped                            // a request loop's turns missed because its previous call was still running
	// The library failures (client kinds that run a real MCP client library; docs/metrics.md).
	CallsHung                     // calls that returned only at their timeout while their session was dead or their stream cut
	HungSeconds                   // the seconds those calls waited, each call rounded to a whole second (shards add exactly)
	ReplayedErrorsDelivered       // a dead session's stored answer (an error replayed from its log) returned as a call's result
	DeadSessionBackgroundRequests // requests a library sent on its own (GETs) carrying a dead session's id
	ListenersSilentlyDead         // GET listeners that stopped with the session still held and nothing surfaced to the application
	ErrorsMisclassified           // session deaths a library surfaced as something else (timeout, "not implemented", context canceled)
	SilentSubstitutions           // POSTs with a dead session's id that the server answered 2xx, unnoticed by the library
	CallsNotMade                  // turns of a calls phase that passed with no live session to call on
	CallsRunTwice                 // tool calls the server ran again (the reference server knows; 0 elsewhere: not observable)
	// The listen stream of the stateless revision (subscriptions/listen; docs/metrics.md).
	Listens               // listen streams the server acknowledged, re-listens included
	ListenDrops           // listen streams that ended without their completion while the client listened
	NotificationsReceived // notifications read on listen streams
	NotificationsLost     // numbered notifications that never arrived: gaps between a drop and the re-listen
	SessionsClosed        // sessions the client ended with DELETE (churn, and the end of the run)
	SessionsAbandoned     // sessions a churning client left without DELETE: it just stopped using them
	// ErrorsOwnLimits: transport errors of the tool's own process running out of descriptors,
	// local ports or buffers (EMFILE, ENFILE, EADDRNOTAVAIL, ENOBUFS): never the server's.
	ErrorsOwnLimits
	// WrongEraRequests: requests the server answered as of a protocol era it does not speak
	// (a 404 carrying -32601, a 400 asking for Mcp-Method): the client had cached the origin's
	// era while a rolling upgrade moved it on. Never counted as session deaths.
	WrongEraRequests
	numCounters
)

var counterNames = [numCounters]string{
	"sessions_started", "drops", "replays_ok", "replays_dead", "replays_unknown_cursor",
	"probes_sent", "sessions_dead", "sessions_dead_detected", "misattributed_errors", "live_sessions_declared_dead",
	"dead_session_requests", "retries_against_dead", "stale_events_applied",
	"events_quarantined", "events_applied", "reinit_collisions", "resyncs", "reconnects_refused",
	"tool_calls_ok", "tool_calls_failed", "requests_lost", "requests_reissued",
	"tool_errors", "server_requests_answered", "calls_skipped",
	"calls_hung", "hung_seconds", "replayed_errors_delivered", "dead_session_background_requests",
	"listeners_silently_dead", "errors_misclassified", "silent_substitutions",
	"calls_not_made", "calls_run_twice",
	"listens", "listen_drops", "notifications_received", "notifications_lost",
	"sessions_closed", "sessions_abandoned",
	"errors_own_limits",
	"wrong_era_requests",
}

func (c Counter) String() string { return counterNames[c] }

// Help says in a sentence what the counter counts (the Prometheus HELP text; docs/metrics.md
// says it at length).
func (c Counter) Help() string { return counterHelp[c] }

var counterHelp = [numCounters]string{
	"Sessions initialized (first sessions and re-initializations).",
	"GET streams that ended while the client still held its session.",
	"Replay GETs (Last-Event-ID) answered 200.",
	"Replay GETs answered a dead-session status (404/410 by default).",
	"Replay GETs that refused the cursor (any other status).",
	"Liveness probes sent after a replay.",
	"Session deaths the clients ran into (sent at least one request to).",
	"Session deaths the clients classified as such.",
	"Failures caused by a dead session that clients surfaced as tool failures.",
	"Sessions clients abandoned as dead on a dead status (a resume answered 404) while the server still had them alive.",
	"Requests sent carrying the id of a session that had already died.",
	"The retries among the dead-session requests.",
	"Replayed events of a dead session applied to client state.",
	"Replayed events withheld because the probe said the session was dead.",
	"Events applied to client state, live and stale.",
	"Requests sent with an old session id after the client had re-initialized.",
	"Cursors refused on a live session: fresh stream, no re-initialization.",
	"GET stream reconnects the server refused because it still held a stream of the session (409, or a 400 dead_statuses do not list).",
	"Tool calls that returned a result.",
	"Tool calls surfaced as failures (after retries).",
	"Stateless revision: requests whose response a fault cut in flight.",
	"Stateless revision: lost requests re-sent with a new request id.",
	"Tool calls whose result said isError: the tool's own answer.",
	"Requests of the server (ping, roots/list, ...) the client answered.",
	"Turns of a request loop missed because its previous call was still running.",
	"Library calls that returned only at their timeout while their session was dead or their stream cut.",
	"Seconds the hung library calls waited, each rounded to a whole second, summed.",
	"A dead session's stored answer, replayed from its log, returned to the application as a call's result.",
	"Requests a client library sent on its own (GET streams) carrying the id of a session that had died.",
	"GET listeners that stopped while the session was held, with nothing surfaced to the application.",
	"Session deaths a client library surfaced as something else (a timeout, not implemented, context canceled).",
	"Requests with a dead session's id that the server answered 2xx, unnoticed by the client library.",
	"Turns of a calls phase that passed with no live session to call on (reconnecting, re-initializing).",
	"Executions of a tool call beyond its first, as the reference server counted them (a retry or re-issue of a call that had run).",
	"Stateless revision: listen streams (subscriptions/listen) the server acknowledged, re-listens included.",
	"Stateless revision: listen streams that ended without their completion result while the client listened (cut).",
	"Stateless revision: notifications read on listen streams.",
	"Stateless revision: numbered notifications that never arrived (sent between a drop and the re-listen).",
	"Sessions the clients ended with DELETE (a churning client's, and each live one at the end of the run).",
	"Sessions churning clients left without DELETE: they stopped using them, and only the server's TTL can reclaim them.",
	"Transport errors of the tool's own process out of descriptors, local ports or buffers (EMFILE, ENFILE, EADDRNOTAVAIL, ENOBUFS).",
	"Requests the server answered as of a protocol era it does not speak (404 with -32601, 400 asking for Mcp-Method): not session deaths.",
}

// Counters lists every counter in export order.
func Counters() []Counter {
	cs := make([]Counter, numCounters)
	for i := range cs {
		cs[i] = Counter(i)
	}
	return cs
}

// Hist names one of the latency histograms (docs/metrics.md). Values are microseconds.
type Hist int

const (
	ProbeLatency     Hist = iota // sending the probe → its status and body
	ReconnectLatency             // noticing the drop → the replay GET's response headers
	// RefusalDuration is how long a session's GET reconnects were refused as a stream already
	// attached (a half-open stream the server still holds): the first refusal → the first
	// reconnect accepted, once per refusal that ended.
	RefusalDuration
	DetectionDelay  // the session's real death → the client classifying it dead
	ToolCallLatency // one tool call attempt, send → result
	RecoveryLatency // stateless revision: a lost request's first send → its re-issue's result
	// ToolCallLatencyCorrected times a tool call from its intended start (its turn on the
	// loop's schedule), not from the send: a stalled server shows as worse samples, not fewer
	// (coordinated omission; wrk2 and HdrHistogram correct the same way).
	ToolCallLatencyCorrected
	// TurnLag is the request loop's own lateness: from a turn's intended start to the start of
	// its call (the send follows at once), when the loop was free to send. It is the load generator's figure, not the
	// server's (package generator; docs/metrics.md, "Generator").
	TurnLag
	// CallFailureLatency times a tool call that failed, from the send to the error the
	// application got (the inside view of client libraries: a hang shows here at its timeout).
	CallFailureLatency
	// DispatchLag is the load generator's own part of an answered tool call's raw sample: from
	// the send to the request written, and from the reply's first byte read to the caller
	// having it (clients/wire, dispatch.go). The generator's figure, not the server's.
	DispatchLag
	// ServerLatency times the server by the kernel's clock, on the fault relay's connection to
	// it: from a request's last byte written to the reply's first byte's arrival (package
	// internal/servertime). Neither the generator's stalls nor its proxies' move it.
	ServerLatency
	// SessionLife times a session as the server's answers show it: from the last request the
	// server answered with a success (under ttl_mode: absolute, the first: its initialize) to
	// the first request it answered with a dead status; one sample per session so answered.
	// It is an upper bound of the server's TTL, learnt from its answers only (docs/metrics.md).
	SessionLife
	numHists
)

var histNames = [numHists]string{"probe_latency", "reconnect_latency", "refusal_duration", "detection_delay", "tool_call_latency", "recovery_latency", "tool_call_latency_corrected", "turn_lag", "call_failure_latency", "dispatch_lag", "server_latency", "session_life"}

func (h Hist) String() string { return histNames[h] }

// Help says in a sentence what the histogram times (the Prometheus HELP text).
func (h Hist) Help() string { return histHelp[h] }

var histHelp = [numHists]string{
	"Liveness probe: from sending it to having its status and body.",
	"Reconnect: from noticing the drop to the replay GET's response headers.",
	"Refusal: from a session's first GET reconnect refused as a stream already attached to its first one accepted.",
	"Detection delay: from the session's death to the client classifying it dead.",
	"Tool call attempt that returned a result: from the send to the result.",
	"Stateless revision: a lost request's first send to its re-issue's result.",
	"Tool call from its intended start (its turn on the schedule) to its result: corrected for coordinated omission.",
	"The load generator's own lag: a request loop's turn, from its intended start to the start of its call.",
	"Tool call that failed: from the send to the error the application got.",
	"The load generator's own part of an answered tool call: send to request written, reply's first byte to the caller having it.",
	"The server by the kernel's clock: a request's last byte written to the reply's first byte's arrival, on the proxy's connection to the server.",
	"Session life as the server's answers show it: from its last success (absolute TTL: its first) to its first dead answer.",
}

// Hists lists every histogram in export order.
func Hists() []Hist {
	hs := make([]Hist, numHists)
	for i := range hs {
		hs[i] = Hist(i)
	}
	return hs
}

// Histogram geometry shared by every recorder, so that histograms of all runs and shards merge.
const (
	HistLowest  = 1                      // 1 µs
	HistHighest = 4 * 3600 * 1000 * 1000 // 4 h in µs: a real-TTL soak's detection delay fits
	HistDigits  = 3
)

// NewHistogram returns an empty histogram with the shared geometry.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistLowest, HistHighest, HistDigits)
}

// ErrorKind classifies transport and protocol errors.
type ErrorKind int

const (
	ErrConnect      ErrorKind = iota // dial refused or failed
	ErrTimeout                       // a request or read deadline passed
	ErrReset                         // connection reset or closed mid-response
	ErrStatus                        // an HTTP status that is neither success nor a dead-session status
	ErrProtocol                      // a body that is not valid JSON-RPC or SSE, a wrong id, a missing header
	ErrTooLarge                      // a body, event, header block or line over its size cap
	ErrRedirect                      // a redirect off the target's origin, or too many of them
	ErrBadSessionID                  // a session id that is too long or not visible ASCII
	ErrOther
	numErrorKinds
)

var errorNames = [numErrorKinds]string{"connect", "timeout", "reset", "status", "protocol", "too_large", "redirect", "bad_session_id", "other"}

func (k ErrorKind) String() string { return errorNames[k] }

// State is where a client's session stands, as the client believes it. The gauges are for
// live progress; "believed live but dead" is not a client state and is counted by whoever can
// see the server's truth.
type State int

const (
	StateStarting     State = iota // initializing (first time)
	StateLive                      // the client believes its session is live
	StateReconnecting              // the GET stream dropped; replay and (for probe) probe pending
	StateReinit                    // the client classified its session dead and is re-initializing
	StateStopped                   // done, or gave up
	numStates
)

var stateNames = [numStates]string{"starting", "live", "reconnecting", "reinit", "stopped"}

func (s State) String() string { return stateNames[s] }

const histShards = 8

type histShard struct {
	mu sync.Mutex
	h  [numHists]*hdrhistogram.Histogram
	_  [64]byte // keep neighbouring shards' locks off one cache line
}

// Recorder records one client group's numbers. All methods are safe for concurrent use.
type Recorder struct {
	Name    string
	Policy  string
	Clients int

	counters     [numCounters]atomic.Int64
	errors       [numErrorKinds]atomic.Int64
	states       [numStates]atomic.Int64
	falseHealthy atomic.Int64 // nanoseconds
	shards       []histShard
}

// NewRecorder returns an empty recorder.
func NewRecorder(name, policy string, clients int) *Recorder {
	n := min(histShards, 2*runtime.GOMAXPROCS(0))
	g := &Recorder{Name: name, Policy: policy, Clients: clients, shards: make([]histShard, n)}
	for i := range g.shards {
		for h := range g.shards[i].h {
			g.shards[i].h[h] = NewHistogram()
		}
	}
	return g
}

// Add bumps a counter.
func (g *Recorder) Add(c Counter, n int64) { g.counters[c].Add(n) }

// Inc bumps a counter by one.
func (g *Recorder) Inc(c Counter) { g.counters[c].Add(1) }

// Get reads a counter now.
func (g *Recorder) Get(c Counter) int64 { return g.counters[c].Load() }

// Error counts one error of a kind.
func (g *Recorder) Error(k ErrorKind) { g.errors[k].Add(1) }

// Errors reads the error count of a kind now.
func (g *Recorder) Errors(k ErrorKind) int64 { return g.errors[k].Load() }

// AddFalseHealthy adds time a client believed a dead session was alive.
func (g *Recorder) AddFalseHealthy(d time.Duration) {
	if d > 0 {
		g.falseHealthy.Add(int64(d))
	}
}

// Move moves one client from one state gauge to another; Enter counts its first state.
func (g *Recorder) Move(from, to State) {
	g.states[from].Add(-1)
	g.states[to].Add(1)
}

// Enter counts a client entering its first state.
func (g *Recorder) Enter(s State) { g.states[s].Add(1) }

// InState reads a state gauge now.
func (g *Recorder) InState(s State) int64 { return g.states[s].Load() }

// Record records one duration into histogram h. key picks the shard (a client index, say), so
// concurrent recorders rarely meet on one lock. Durations below 1 µs record as 1 µs; values
// past the geometry are clamped to its top rather than lost.
func (g *Recorder) Record(h Hist, key int, d time.Duration) {
	us := d.Microseconds()
	if us < HistLowest {
		us = HistLowest
	}
	if us > HistHighest {
		us = HistHighest
	}
	s := &g.shards[uint(key)%uint(len(g.shards))]
	s.mu.Lock()
	_ = s.h[h].RecordValue(us) // cannot fail: the value is clamped into range
	s.mu.Unlock()
}

// Snapshot is a point-in-time copy of a group's numbers, with its histograms merged.
type Snapshot struct {
	Name                string
	Policy              string
	Clients             int
	Counters            [numCounters]int64
	Errors              [numErrorKinds]int64
	States              [numStates]int64
	FalseHealthySeconds float64
	Hists               [numHists]*hdrhistogram.Histogram
}

// Snapshot merges the shards into fresh histograms and reads every counter.
func (g *Recorder) Snapshot() *Snapshot {
	s := &Snapshot{Name: g.Name, Policy: g.Policy, Clients: g.Clients}
	for i := range s.Counters {
		s.Counters[i] = g.counters[i].Load()
	}
	for i := range s.Errors {
		s.Errors[i] = g.errors[i].Load()
	}
	for i := range s.States {
		s.States[i] = g.states[i].Load()
	}
	s.FalseHealthySeconds = time.Duration(g.falseHealthy.Load()).Seconds()
	for h := range s.Hists {
		s.Hists[h] = NewHistogram()
	}
	for i := range g.shards {
		sh := &g.shards[i]
		sh.mu.Lock()
		for h := range s.Hists {
			s.Hists[h].Merge(sh.h[h])
		}
		sh.mu.Unlock()
	}
	return s
}

// Counter reads a counter of the snapshot.
func (s *Snapshot) Counter(c Counter) int64 { return s.Counters[c] }

// Hist returns a histogram of the snapshot.
func (s *Snapshot) Hist(h Hist) *hdrhistogram.Histogram { return s.Hists[h] }

// RetryAmplification is dead_session_requests / sessions_dead: how many requests each session
// death cost. 1.0 is the floor (one request to learn of the death); 0 when no session died.
func (s *Snapshot) RetryAmplification() float64 {
	dead := s.Counters[SessionsDead]
	if dead == 0 {
		return 0
	}
	return float64(s.Counters[DeadSessionRequests]) / float64(dead)
}
