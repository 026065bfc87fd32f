package workloads

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// Validate checks every value of w that a run relies on, as a Go caller may have set it: it is
// the one definition of a valid Workload. Parse calls it on what it decoded (the decoder has
// already placed each mistake of a file at its line and column; what only Validate finds is
// named by field), and engine.NewPlan calls it on what it will run, so that a workload changed
// in Go is held to the same rules as a file. Defaults are not filled in here: a field a file
// may leave out has its default in a decoded Workload, and a Go caller who builds one must
// set it.
//
// The error is a *ValidationError whose entries name the field as a workload file does
// (groups[1].clients) and carry no position.
func (w *Workload) Validate() error {
	if w == nil {
		return &ValidationError{Errs: []*Error{{Field: "workload", Msg: "is nil; load one with workloads.Load or workloads.Builtin"}}}
	}
	v := &validator{file: w.Source}
	if !validName(w.Name) || len(w.Name) > maxNameLen {
		v.add("name", "%q must be 1 to %d lowercase letters, digits, - and _", w.Name, maxNameLen)
	}
	v.target(w)
	if w.Toxiproxy != "" {
		if msg := CheckToxiproxyURL(w.Toxiproxy); msg != "" {
			v.add("toxiproxy", "%s", msg)
		}
	}
	v.phases(w)
	v.groups(w)
	v.faults(w)
	v.thresholds(w)
	v.steadyState(w)
	v.rollbacks(w)
	if len(v.errs) == 0 {
		return nil
	}
	return &ValidationError{Errs: v.errs}
}

type validator struct {
	file string
	errs []*Error
}

func (v *validator) add(field, format string, args ...any) {
	if len(v.errs) < maxErrors {
		v.errs = append(v.errs, &Error{File: v.file, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
}

func (v *validator) oneOf(field, got string, allowed []string) {
	if !slices.Contains(allowed, got) {
		v.add(field, "%q is not one of %s", got, strings.Join(allowed, ", "))
	}
}

func (v *validator) intIn(field string, got, lo, hi int) {
	if got < lo || got > hi {
		v.add(field, "%d is outside %d..%d", got, lo, hi)
	}
}

// duration checks 0 <= d <= 30 days (or 0 < d with positive).
func (v *validator) duration(field string, d time.Duration, positive bool) {
	switch {
	case positive && d <= 0:
		v.add(field, "%s must be greater than 0s", fmtDur(d))
	case d < 0:
		v.add(field, "%s must not be negative", fmtDur(d))
	case d > maxDuration:
		v.add(field, "%s is longer than %s", fmtDur(d), fmtDur(maxDuration))
	}
}

// loop checks a duration that drives a loop against its lower bound (loopDuration); zero
// passes where it turns the loop off.
func (v *validator) loop(field string, d, lo time.Duration, zeroOff bool) {
	if d < lo && (d != 0 || !zeroOff) && d > 0 {
		v.add(field, "%s is shorter than %s, which would be a storm rather than a measurement", fmtDur(d), fmtDur(lo))
	}
}

func (v *validator) status(field string, s int) { v.intIn(field, s, 100, 599) }

func (v *validator) target(w *Workload) {
	t := w.Target
	switch {
	case t.Builtin != nil && t.URL != "":
		v.add("target", "names both the built-in server and a url; keep one")
	case t.Builtin != nil:
		v.builtin(t.Builtin)
		if t.SessionTTL != t.Builtin.SessionTTL {
			v.add("target.session_ttl", "%s differs from the built-in server's %s; they are one value", fmtDur(t.SessionTTL), fmtDur(t.Builtin.SessionTTL))
		}
	case t.URL != "":
		if msg := CheckURL(t.URL); msg != "" {
			v.add("target.url", "%s", msg)
		}
		v.duration("target.session_ttl", t.SessionTTL, false)
	default:
		v.add("target", "names neither the built-in server nor a url")
	}
	if t.URL == "" && (len(t.Headers) > 0 || t.CAFile != "" || t.InsecureSkipVerify || t.HTTP2) {
		v.add("target", "headers, ca_file, insecure_skip_verify and http2 apply to a url target only")
	}
	for i, h := range t.Headers {
		if !validHeaderName(h.Name) {
			v.add(fmt.Sprintf("target.headers[%d]", i), "%q is not an HTTP header name", h.Name)
		}
	}
	if t.CAFile != "" && t.InsecureSkipVerify {
		v.add("target.insecure_skip_verify", "excludes ca_file; keep one")
	}
}

func (v *validator) builtin(b *BuiltinTarget) {
	const p = "target.builtin."
	v.duration(p+"session_ttl", b.SessionTTL, true)
	v.duration(p+"retention", b.Retention, true)
	v.intIn(p+"retention_events", b.RetentionEvents, 1, maxRetentionEvents)
	v.oneOf(p+"get_validation", b.GetValidation, getValidation)
	if b.TTLMode != "" {
		v.oneOf(p+"ttl_mode", b.TTLMode, ttlModes)
	}
	v.status(p+"dead_status", b.DeadStatus)
	if b.UnknownCursorStatus != -1 {
		v.status(p+"unknown_cursor_status", b.UnknownCursorStatus)
	}
	if b.EvictedCursor != "" {
		v.oneOf(p+"evicted_cursor", b.EvictedCursor, evictedCursors)
	}
	v.duration(p+"notify_interval", b.NotifyInterval, false)
	v.loop(p+"notify_interval", b.NotifyInterval, minServerTick, true)
	v.duration(p+"keepalive", b.Keepalive, false)
	v.loop(p+"keepalive", b.Keepalive, minServerTick, true)
	if b.KeepaliveShape != "" {
		v.oneOf(p+"keepalive.shape", b.KeepaliveShape, vocab.KeepaliveShapes())
		if b.KeepaliveShape != vocab.KeepaliveNone && b.Keepalive <= 0 {
			v.add(p+"keepalive.every", "is needed for a keep-alive of shape %s (e.g. every: 15s)", b.KeepaliveShape)
		}
	}
	v.duration(p+"retry", b.Retry, false)
	if b.Retry%time.Millisecond != 0 {
		v.add(p+"retry", "%s is not a whole number of milliseconds", fmtDur(b.Retry))
	}
	v.oneOf(p+"post_response", b.PostResponse, postResponses)
	v.intIn(p+"replicas", b.Replicas, 1, maxReplicas)
	v.intIn(p+"max_sessions", b.MaxSessions, 0, maxMaxSessions)
	v.oneOf(p+"routing", b.Routing, routings)
	if strings.Contains(b.EventLog, "://") {
		if msg := checkRedisURL(b.EventLog); msg != "" {
			v.add(p+"event_log", "%s", msg)
		}
	} else {
		v.oneOf(p+"event_log", b.EventLog, eventLogs)
	}
}

// phases checks the timeline the run follows: phases back to back from 0, summing to Duration.
func (v *validator) phases(w *Workload) {
	if len(w.Phases) == 0 || len(w.Phases) > maxListLen {
		v.add("phases", "has %d phases; a run needs 1 to %d", len(w.Phases), maxListLen)
		return
	}
	var start time.Duration
	for i, p := range w.Phases {
		f := fmt.Sprintf("phases[%d]", i)
		if p.Name == "" {
			v.add(f+".name", "is empty")
		}
		v.duration(f+".duration", p.Duration, true)
		if p.Start != start {
			v.add(f+".start", "%s, where the phases before it end at %s; phases run back to back", fmtDur(p.Start), fmtDur(start))
		}
		if p.Duration > 0 && p.Duration <= maxDuration {
			start += p.Duration
		}
	}
	if w.Duration != start {
		v.add("duration", "%s, where the phases add up to %s", fmtDur(w.Duration), fmtDur(start))
	}
	if start > maxDuration {
		v.add("phases", "add up to %s, longer than %s", fmtDur(start), fmtDur(maxDuration))
	}
}

// reservedGroupNames are the row groups of exports and compare that are not client groups:
// a client group of that name would be judged as (and mixed with) them.
var reservedGroupNames = map[string]bool{"overall": true, "threshold": true, "steady_state": true, "session_leak": true}

func (v *validator) groups(w *Workload) {
	if len(w.Groups) == 0 || len(w.Groups) > maxListLen {
		v.add("groups", "has %d groups; a run needs 1 to %d", len(w.Groups), maxListLen)
		return
	}
	seen := map[string]int{}
	for i, g := range w.Groups {
		f := fmt.Sprintf("groups[%d]", i)
		if !validName(g.Name) || len(g.Name) > maxNameLen {
			v.add(f+".name", "%q must be 1 to %d lowercase letters, digits, - and _", g.Name, maxNameLen)
		} else if reservedGroupNames[g.Name] {
			v.add(f+".name", "%q is reserved: exports, compare and thresholds use it for their own rows; name the group otherwise", g.Name)
		} else if j, dup := seen[g.Name]; dup {
			v.add(f+".name", "duplicate group name %q (also groups[%d]); give each group its own name", g.Name, j)
		} else {
			seen[g.Name] = i
		}
		v.intIn(f+".clients", g.Clients, 1, maxClients)
		v.duration(f+".ramp", g.Ramp, false)
		if g.Ramp > w.Duration && w.Duration > 0 {
			v.add(f+".ramp", "%s is longer than the whole run (%s)", fmtDur(g.Ramp), fmtDur(w.Duration))
		}
		v.oneOf(f+".policy", g.Policy, policies)
		v.intIn(f+".retries", g.Retries, 0, maxRetries)
		v.duration(f+".retry_backoff", g.RetryBackoff, false)
		v.oneOf(f+".probe", g.Probe, probes)
		v.deadStatuses(f+".dead_statuses", g.DeadStatuses)
		v.duration(f+".call_every", g.CallEvery, true)
		v.loop(f+".call_every", g.CallEvery, minCallEvery, false)
		if w.Target.URL != "" {
			if g.Tool == "" {
				v.add(f+".tool", "is empty; name a tool the server offers")
			}
		} else {
			v.oneOf(f+".tool", g.Tool, tools)
		}
		v.intIn(f+".concurrency", g.Concurrency, 1, maxConcurrency)
		v.duration(f+".request_timeout", g.RequestTimeout, true)
		v.oneOf(f+".protocol", g.Protocol, protocols)
		if g.LogLevel != "" {
			v.oneOf(f+".log_level", g.LogLevel, vocab.LogLevels())
		}
		for j, r := range g.Roots {
			if !strings.Contains(r.URI, "://") {
				v.add(fmt.Sprintf("%s.roots[%d].uri", f, j), "%q is not a URI", r.URI)
			}
		}
		v.churn(f+".churn", g.Churn, g.Policy, w.Phases)
		for m := range g.ServerReplies {
			if m != vocab.MethodSampling && m != vocab.MethodElicitation {
				v.add(f+".server_replies", "%q is not a server request mcpchaos answers; use %s or %s", m, vocab.MethodSampling, vocab.MethodElicitation)
			}
		}
	}
	if total := w.Clients(); total > MaxClients {
		v.add("groups", "%d clients in all, more than %d; %s", total, MaxClients, shardHint)
	}
}

func (v *validator) deadStatuses(f string, ss []int) {
	if len(ss) == 0 || len(ss) > maxStatuses {
		v.add(f, "has %d statuses; list 1 to %d, e.g. [404, 410]", len(ss), maxStatuses)
	}
	seen := map[int]bool{}
	for j, s := range ss {
		v.status(fmt.Sprintf("%s[%d]", f, j), s)
		if seen[s] {
			v.add(fmt.Sprintf("%s[%d]", f, j), "%d is listed twice", s)
		}
		seen[s] = true
	}
}

func (v *validator) faults(w *Workload) {
	if len(w.Faults) > maxListLen {
		v.add("faults", "has %d faults, more than %d", len(w.Faults), maxListLen)
		return
	}
	groups := map[string]bool{}
	for _, g := range w.Groups {
		groups[g.Name] = true
	}
	names := map[string]bool{}
	for i, flt := range w.Faults {
		f := fmt.Sprintf("faults[%d]", i)
		if !validName(flt.Name) || len(flt.Name) > maxNameLen {
			v.add(f+".name", "%q must be 1 to %d lowercase letters, digits, - and _", flt.Name, maxNameLen)
		} else if names[flt.Name] {
			v.add(f+".name", "duplicate fault name %q", flt.Name)
		}
		names[flt.Name] = true
		v.duration(f+".at", flt.At, false)
		v.duration(f+".for", flt.For, false)
		if flt.At >= w.Duration || flt.For > 0 && flt.At+flt.For > w.Duration {
			v.add(f, "at %s for %s does not fit in the run, which lasts %s", fmtDur(flt.At), fmtDur(flt.For), fmtDur(w.Duration))
		}
		if flt.Action != nil {
			v.action(f, w, flt)
			continue
		}
		if err := vocab.ValidateToxic(flt.Toxic, flt.Attributes); err != nil {
			v.add(f+".toxic", "%v", err)
		}
		v.oneOf(f+".stream", flt.Stream, streams)
		for j, g := range flt.Groups {
			if !groups[g] {
				v.add(fmt.Sprintf("%s.groups[%d]", f, j), "names group %q, which this workload does not have", g)
			}
		}
	}
}

func (v *validator) action(f string, w *Workload, flt Fault) {
	a := flt.Action
	if flt.Toxic != "" || flt.Stream != "" || flt.Attributes != nil || flt.Groups != nil || flt.For != 0 {
		v.add(f, "an action (%s) has no toxic, stream, attributes, groups or for", a.Kind)
	}
	if !slices.Contains(actionKinds, a.Kind) {
		v.add(f+".action", "%q is not one of %s", a.Kind, strings.Join(actionKinds, ", "))
		return
	}
	b := w.Target.Builtin
	if slices.Contains(topologyActions, a.Kind) && b == nil {
		v.add(f+"."+a.Kind, "acts on the built-in reference server's replicas, and the target is a url")
	}
	p := f + "." + a.Kind
	switch a.Kind {
	case ActionRestart:
		if b != nil && a.Replica != -1 {
			v.intIn(p+".replica", a.Replica, 0, b.Replicas-1)
		}
		v.duration(p+".delay", a.Delay, false)
		v.duration(p+".grace", a.Grace, false)
	case ActionScale:
		v.intIn(p+".replicas", a.Replicas, 1, maxReplicas)
	case ActionExec:
		if strings.TrimSpace(a.Command) == "" {
			v.add(p+".command", "is empty")
		}
		v.duration(p+".timeout", a.Timeout, true)
		v.intIn(p+".max_output", a.MaxOutput, 1, maxMaxOutput)
	case ActionWaitFor:
		if a.WaitFor == nil {
			v.add(p, "says neither a url nor a command to wait for")
		}
	}
	if wf := a.WaitFor; wf != nil {
		wp := f + "." + ActionWaitFor
		switch {
		case (wf.URL == "") == (len(wf.Command) == 0):
			v.add(wp, "needs a url or a command, one of them")
		case wf.URL != "":
			if msg := CheckURL(wf.URL); msg != "" {
				v.add(wp+".url", "%s", msg)
			}
		}
		v.duration(wp+".timeout", wf.Timeout, true)
		v.duration(wp+".interval", wf.Interval, true)
		v.loop(wp+".interval", wf.Interval, minRetryInterval, false)
	}
}

// thresholds checks each threshold is what its expression says, about a group of w.
func (v *validator) thresholds(w *Workload) {
	v.thresholdList("thresholds", w, w.Thresholds)
}

// CheckThresholds validates thresholds added to w (engine.WithThresholds) as Validate checks
// the workload's own; field names them as field[i].
func (w *Workload) CheckThresholds(field string, ths []gate.Threshold) error {
	v := &validator{file: w.Source}
	v.thresholdList(field, w, ths)
	if len(v.errs) == 0 {
		return nil
	}
	return &ValidationError{Errs: v.errs}
}

func (v *validator) thresholdList(field string, w *Workload, ths []gate.Threshold) {
	scopes := map[string]bool{"overall": true}
	var names []string
	for _, g := range w.Groups {
		scopes[g.Name] = true
		names = append(names, g.Name)
	}
	for i, th := range ths {
		f := fmt.Sprintf("%s[%d]", field, i)
		parsed, err := gate.ParseThreshold(th.Expr)
		if err != nil {
			v.add(f, "%v", err)
			continue
		}
		parsed.AbortOnFail = th.AbortOnFail
		if parsed != th {
			v.add(f, "%q is not what its expression says; make it with gate.ParseThreshold", th.Expr)
			continue
		}
		if !scopes[th.Scope] {
			v.add(f, "threshold %q is about group %q, which workload %s does not have; use one of %s, or overall", th.Expr, th.Scope, w.Name, strings.Join(names, ", "))
		}
		if th.AbortOnFail {
			if err := th.EarlyError(); err != nil {
				v.add(f, "threshold %q: %v", th.Expr, err)
			}
		}
	}
}

// fingerprint is a digest of w's values (not of its Source and Hash, nor of the file's bytes);
// "" when they cannot be encoded.
func (w *Workload) fingerprint() string {
	c := *w
	c.Source, c.Hash = "", ""
	b, err := json.Marshal(c)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ChangedInGo reports whether w is not what its file gave: changed in Go after Load, Parse or
// Builtin, or built in Go from scratch.
func (w *Workload) ChangedInGo() bool {
	fp := w.fingerprint()
	return w.decodedAs == "" || fp == "" || fp != w.decodedAs
}

// AsRun is w as a run names it. A workload changed in Go is another experiment than its file's:
// its Source says so and its Hash is the digest of its values, so that compare and merge never
// take a 5-client run of seed-incident-fast for one of the file's 25 (the same change made in
// every shard gives every shard the same hash). An unchanged w is returned as it is.
func (w *Workload) AsRun() *Workload {
	if !w.ChangedInGo() {
		return w
	}
	c := *w
	if c.Source == "" {
		c.Source = "go"
	} else if !strings.HasSuffix(c.Source, changedInGo) {
		c.Source += changedInGo
	}
	c.Hash = w.fingerprint()
	c.decodedAs = c.fingerprint()
	return &c
}

const changedInGo = " (changed in Go)"
