package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// toolArgs are the arguments learnt from the tool's inputSchema, once per group.
type toolArgs struct {
	mu   sync.Mutex
	args map[string]any
	err  error // a lasting reason no arguments can be built (the tool is not offered)
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
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		f.args.err = fmt.Errorf("tools/list result: %w", err)
		f.protocolError(f.args.err)
		return nil, f.args.err
	}
	names := make([]string, 0, len(res.Tools))
	for _, t := range res.Tools {
		if t.Name != f.cfg.Tool {
			names = append(names, t.Name)
			continue
		}
		args, err := MinimalArgs(t.InputSchema)
		if err != nil {
			f.sample(fmt.Sprintf("tool %s: %v", f.cfg.Tool, err))
		}
		f.args.args = args
		return args, nil
	}
	f.args.err = fmt.Errorf("tool %q is not offered by the server (it offers: %s); name one in the group's `tool`", f.cfg.Tool, strings.Join(names, ", "))
	f.sample(f.args.err.Error())
	return nil, f.args.err
}

// listTools is tools/list on a wire session, for arguments.
func (f *Fleet) listTools(s *Session) func(context.Context) (json.RawMessage, error) {
	return func(ctx context.Context) (json.RawMessage, error) {
		rep, err := s.ListTools(ctx)
		if err != nil || !rep.OK() {
			f.callFailed(rep, err, false)
			return nil, errors.New("tools/list failed")
		}
		return rep.Result, nil
	}
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
	f.rec.Error(Kind(err))
	f.sample(err.Error())
}

// protocolError counts a reply that breaks the protocol's rules and keeps its text.
func (f *Fleet) protocolError(err error) {
	f.rec.Error(metrics.ErrProtocol)
	f.sample("protocol: " + err.Error())
}

// callFailed counts why a request got no result: a transport or protocol error, an HTTP status
// that is not a dead-session one, or a JSON-RPC error (kept as text only: the server answered).
func (f *Fleet) callFailed(rep *Reply, err error, dead bool) {
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
	// ServedAfterDeath counts successes the server answered for sessions past their estimated
	// death (a server that serves dead ids, or a wrong TTL or regime).
	ServedAfterDeath int64 `json:"served_after_estimated_death,omitempty"`
	// SessionIDChanged counts replies that named a session id other than the one sent.
	SessionIDChanged int64 `json:"session_id_changed,omitempty"`
}

// Report returns the group's report so far.
func (f *Fleet) Report() Report {
	f.samples.mu.Lock()
	texts := slices.Clone(f.samples.texts)
	f.samples.mu.Unlock()
	r := Report{ErrorSamples: texts, ServerRequests: f.ep.Responder.Answered(), DeathTimes: map[string]int64{}}
	if len(r.ServerRequests) == 0 {
		r.ServerRequests = nil
	}
	for i, name := range []string{DeathExact, DeathFromTTL, DeathObserved} {
		if n := f.deaths[i].Load(); n > 0 {
			r.DeathTimes[name] = n
		}
	}
	if len(r.DeathTimes) == 0 {
		r.DeathTimes = nil
	}
	r.SessionIDChanged = f.ep.idChanged.Load()
	if e, ok := f.truth.(*Estimated); ok {
		r.ServedAfterDeath = e.ServedAfterDeath()
	}
	return r
}
