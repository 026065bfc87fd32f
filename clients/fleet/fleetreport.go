package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// errNoTool is a server that lists no tool: no call can be made, whatever the group asks.
var errNoTool = errors.New("the server offers no tool, so no tool call can be made")

// argsFailed counts a call that could not be made for want of arguments; a server without
// tools refuses every call.
func (f *Fleet) argsFailed(err error) {
	f.rec.Inc(metrics.ToolCallsFailed)
	if errors.Is(err, errNoTool) {
		f.refusedCalls.Add(1)
	}
}

// toolArgs are the arguments learnt from the tool's inputSchema, once per group.
type toolArgs struct {
	mu   sync.Mutex
	tool string // the tool called: the group's, or the server's first when it lacks the group's
	args map[string]any
	err  error // a lasting reason no arguments can be built (the server offers no tool)
}

// arguments returns the arguments of client c's next call: the group's, with placeholders
// expanded, or the smallest instance of the tool's inputSchema, learnt the first time from
// list (tools/list, sent the way the client's kind sends it).
func (f *Fleet) arguments(ctx context.Context, c *Client, list func(context.Context) (json.RawMessage, error)) (any, error) {
	if f.cfg.Arguments != nil {
		return expandArgs(f.cfg.Arguments, f.cfg.Name, c.idx, c.calls.Load()+1), nil
	}
	f.args.mu.Lock()
	defer f.args.mu.Unlock()
	if f.args.args != nil || f.args.err != nil {
		return f.args.args, f.args.err
	}
	raw, err := list(ctx)
	if err != nil {
		return nil, err // try again on the next call
	}
	var res struct {
		Tools []toolEntry `json:"tools"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		f.args.err = fmt.Errorf("tools/list result: %w", err)
		f.protocolError(f.args.err)
		return nil, f.args.err
	}
	if len(res.Tools) == 0 {
		f.args.err = errNoTool
		f.sample(f.args.err.Error())
		return nil, f.args.err
	}
	// The group's tool; when the server lacks it (a built-in workload run against a server by
	// --target names the reference server's echo), the one the server lists that says it
	// reports progress (its replies then stream with event ids: a cursor), or else the first,
	// said so.
	pick := slices.IndexFunc(res.Tools, func(t toolEntry) bool { return t.Name == f.cfg.Tool })
	if pick < 0 {
		names := make([]string, len(res.Tools))
		for i, t := range res.Tools {
			names[i] = t.Name
		}
		pick = max(0, slices.IndexFunc(res.Tools, reportsProgress))
		f.sample(fmt.Sprintf("tool %q is not offered by the server (it offers: %s); calling %q instead: name one in the group's `tool`", f.cfg.Tool, strings.Join(names, ", "), names[pick]))
	}
	t := res.Tools[pick]
	args, err := MinimalArgs(t.InputSchema)
	if err != nil {
		f.sample(fmt.Sprintf("tool %s: %v", t.Name, err))
	}
	f.args.tool, f.args.args = t.Name, args
	return args, nil
}

type toolEntry struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// reportsProgress guesses from its name and description whether a tool reports progress.
func reportsProgress(t toolEntry) bool {
	text := strings.ToLower(t.Name + " " + t.Description)
	return strings.Contains(text, "progress") || strings.Contains(text, "notif") || strings.Contains(text, "long")
}

// tool is the name of the tool the group calls.
func (f *Fleet) tool() string {
	f.args.mu.Lock()
	defer f.args.mu.Unlock()
	if f.args.tool != "" {
		return f.args.tool
	}
	return f.cfg.Tool
}

// errorSamples keeps the first few distinct failure texts of a group, for the export: a count
// of failures says that something went wrong, the text says what.
type errorSamples struct {
	mu    sync.Mutex
	texts []string
}

const maxSamples = 5

// sample keeps text if it is new and there is room. It takes a lock, but only on failure paths.
func (f *Fleet) sample(text string) {
	f.samples.mu.Lock()
	defer f.samples.mu.Unlock()
	if len(f.samples.texts) < maxSamples && !slices.Contains(f.samples.texts, text) {
		f.samples.texts = append(f.samples.texts, text)
	}
}

// failed counts an error of a request and keeps its text.
func (f *Fleet) failed(err error) {
	if se := (*wire.StatusError)(nil); errors.As(err, &se) && se.WrongEra() {
		f.rec.Inc(metrics.WrongEraRequests) // an initialize the server's era does not know
	}
	wire.Count(f.rec, err)
	f.sample(err.Error())
}

// protocolError counts a reply that breaks the protocol's rules and keeps its text.
func (f *Fleet) protocolError(err error) {
	f.rec.Error(metrics.ErrProtocol)
	f.sample("protocol: " + err.Error())
}

// refusal counts a session-scoped request answered with a 4xx or 5xx status that is not a
// dead-session one.
func (f *Fleet) refusal(status int) {
	if status >= 400 && status < 600 && !f.env.Dead(status) {
		f.refusedWith[status-400].Add(1)
	}
}

// RefusedWith is how many of the group's session-scoped requests the server answered with
// status (a 4xx or 5xx that dead_statuses do not list): what the run saw, where a status
// error (metrics.ErrStatus) also counts replays a probe left ambiguous.
func (f *Fleet) RefusedWith(status int) int64 {
	if status < 400 || status >= 600 {
		return 0
	}
	return f.refusedWith[status-400].Load()
}

// callFailed counts why a request got no result: a transport or protocol error, an HTTP status
// that is not a dead-session one, or a JSON-RPC error (kept as text only: the server answered).
func (f *Fleet) callFailed(rep *wire.Reply, err error, dead bool) {
	switch {
	case err != nil:
		f.failed(err)
	case rep == nil:
	case !dead && rep.Status/100 != 2:
		f.rec.Error(metrics.ErrStatus)
		f.sample(fmt.Sprintf("HTTP %d: %s", rep.Status, clip(strings.TrimSpace(rep.Body), 160)))
	case rep.RPCError != nil:
		f.sample(fmt.Sprintf("JSON-RPC error %d: %s", rep.RPCError.Code, clip(rep.RPCError.Message, 160)))
	}
}

// surfaced counts a tool call surfaced as a failure; refused says the server refused its last
// attempt rather than a fault or a session death cutting it.
func (f *Fleet) surfaced(rep *wire.Reply, err error, dead bool) {
	f.rec.Inc(metrics.ToolCallsFailed)
	if refusal(rep, err, dead) {
		f.refusedCalls.Add(1)
	}
}

// refusal says whether a failed attempt was the server's refusal: a JSON-RPC error, a status
// that is neither a success nor a dead session's, or a reply that broke the protocol.
func refusal(rep *wire.Reply, err error, dead bool) bool {
	if err != nil {
		k := wire.Kind(err)
		return k == metrics.ErrProtocol || k == metrics.ErrTooLarge || k == metrics.ErrBadSessionID
	}
	return rep != nil && !dead && (rep.Status/100 != 2 || rep.RPCError != nil)
}

// Report is what a group learnt beyond its counters, for the export.
type Report struct {
	// ErrorSamples are the first distinct failure texts (transport, protocol, status, JSON-RPC
	// errors, tool errors).
	ErrorSamples []string `json:"error_samples,omitempty"`
	// ServerRequests counts the server's requests answered, by method.
	ServerRequests map[string]int64 `json:"server_requests_answered,omitempty"`
	// DeathTimes counts the session deaths the group ran into or detected, by how their time
	// was obtained: exact (the reference server), estimated_from_ttl, observed.
	DeathTimes map[string]int64 `json:"death_times,omitempty"`
	// ServedAfterDeath counts POST successes for sessions the server had answered with a dead
	// status (a server that serves dead ids as alive).
	ServedAfterDeath int64 `json:"served_after_death,omitempty"`
	// EstimateRefuted counts successes for sessions past their estimated death: the declared
	// TTL or regime understates the server's session lifetime, so the estimates are off.
	EstimateRefuted int64 `json:"estimate_refuted,omitempty"`
	// RefusedCalls counts tool calls surfaced as failures whose last attempt the server refused
	// (a JSON-RPC error, a status that is not a dead session's, a reply that broke the rules).
	RefusedCalls int64 `json:"refused_calls,omitempty"`
	// SessionIDChanged counts replies that named a session id other than the one sent.
	SessionIDChanged int64 `json:"session_id_changed,omitempty"`
	// CallsDue counts the call turns that came while a phase made calls, whether a call was
	// made or not (skipped, impossible).
	CallsDue int64 `json:"calls_due,omitempty"`
	// CallsSent counts the tool calls sent, whatever came of them (a dead session's included).
	CallsSent int64 `json:"calls_sent,omitempty"`
	// LibraryProblems say where a library kind could not be measured (a node worker died).
	LibraryProblems []string `json:"library_problems,omitempty"`
}

// Report returns the group's report so far.
func (f *Fleet) Report() Report {
	f.samples.mu.Lock()
	texts := slices.Clone(f.samples.texts)
	f.samples.mu.Unlock()
	r := Report{ErrorSamples: texts, ServerRequests: f.ep.Responder.Answered(), DeathTimes: map[string]int64{},
		LibraryProblems: f.libraryProblems()}
	if len(r.ServerRequests) == 0 {
		r.ServerRequests = nil
	}
	for i, name := range []string{truth.DeathExact, truth.DeathFromTTL, truth.DeathObserved} {
		if n := f.deaths[i].Load(); n > 0 {
			r.DeathTimes[name] = n
		}
	}
	if len(r.DeathTimes) == 0 {
		r.DeathTimes = nil
	}
	r.SessionIDChanged = f.ep.SessionIDChanged()
	r.RefusedCalls = f.refusedCalls.Load()
	r.CallsDue = f.callsDue.Load()
	for _, c := range f.clients {
		r.CallsSent += c.calls.Load()
	}
	if e, ok := f.truth.(*truth.Estimated); ok {
		r.ServedAfterDeath, r.EstimateRefuted = e.ServedAfterDeath(), e.Refuted()
	}
	return r
}

// clip cuts s to n bytes for an error text.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
