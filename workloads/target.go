package workloads

import "time"

var targetSchema = schema{keys: []schemaKey{
	{"builtin", "configure the built-in reference server, e.g. builtin: {session_ttl: 30m}"},
	{"url", "use target.builtin"},
}}

var builtinSchema = schema{keys: []schemaKey{
	{"session_ttl", "set how long the server keeps a session, e.g. session_ttl: 30m"},
	{"retention", "set how long the event log keeps events, e.g. retention: 60m (default: twice session_ttl)"},
	{"retention_events", "set how many events the event log keeps per session (default 1024)"},
	{"get_validation", "set whether the SSE GET checks the session: permissive (the seed's regime) or strict"},
	{"dead_status", "set the HTTP status the server answers for a dead session, e.g. 404"},
	{"dead_body", `set the body the server answers for a dead session, e.g. {"error":"session expired"}`},
	{"unknown_cursor_status", "set the HTTP status for a replay from an unknown cursor, e.g. 400, or -1 for 200 with nothing replayed"},
	{"notify_interval", "set how often the server sends each session a notification, e.g. 1s, or 0s for never"},
	{"keepalive", "set how often the server writes an SSE keepalive comment, e.g. 15s, or 0s for never"},
	{"retry", "set the SSE retry the server advertises, e.g. 200ms, or 0s to send none"},
	{"post_response", "set how the server answers a POST: sse (an event stream) or json"},
}}

// target decodes the target section. ttlOK says whether Target.SessionTTL is
// known, so that phases using "ttl" can be resolved (or skipped quietly when
// the TTL itself was reported as wrong).
func (d *decoder) target(f *field) (Target, bool) {
	var t Target
	m := d.mapping(f.node, f.path, &targetSchema)
	if u := m.field("url"); u != nil {
		t.URL, _ = d.str(u)
		d.errorf(u.key, u.path, "not supported yet; use target.builtin")
		if m.field("builtin") == nil {
			return t, false
		}
	}
	bf := m.require("builtin")
	if bf == nil {
		return t, false
	}
	b, ok := d.builtin(bf)
	t.Builtin = b
	t.SessionTTL = b.SessionTTL
	return t, ok
}

func (d *decoder) builtin(f *field) (*BuiltinTarget, bool) {
	m := d.mapping(f.node, f.path, &builtinSchema)
	b := &BuiltinTarget{}
	ttlOK := false
	if tf := m.require("session_ttl"); tf != nil {
		if v, ok := d.duration(tf); ok && d.checkDuration(tf, v, 0, true) {
			b.SessionTTL, ttlOK = v, true
		}
	}
	b.Retention = m.durationAtLeast("retention", 2*b.SessionTTL, 0, true)
	b.RetentionEvents = int(m.intIn("retention_events", defaultRetentionEvents, 1, maxRetentionEvents))
	b.GetValidation = m.oneOf("get_validation", getValidation)
	b.DeadStatus = int(m.intIn("dead_status", defaultDeadStatus, 100, 599))
	b.DeadBody = m.str("dead_body", defaultDeadBody)
	b.UnknownCursorStatus = defaultUnknownCursorStatus
	if cf := m.field("unknown_cursor_status"); cf != nil {
		if v, ok := d.integer(cf); ok {
			if v == -1 || v >= 100 && v <= 599 {
				b.UnknownCursorStatus = int(v)
			} else {
				d.errorf(cf.node, cf.path, "must be an HTTP status between 100 and 599, or -1, got %d; %s", v, cf.hint)
			}
		}
	}
	b.NotifyInterval = m.durationAtLeast("notify_interval", defaultNotifyInterval, 0, false)
	b.Keepalive = m.durationAtLeast("keepalive", 0, 0, false)
	b.Retry = m.durationAtLeast("retry", 0, 0, false)
	if rf := m.field("retry"); rf != nil && b.Retry%time.Millisecond != 0 {
		d.errorf(rf.node, rf.path, "%s is not a whole number of milliseconds, which is all SSE's retry field can carry; round it, e.g. %s",
			fmtDur(b.Retry), fmtDur(max(b.Retry.Round(time.Millisecond), time.Millisecond)))
	}
	b.PostResponse = m.oneOf("post_response", postResponses)
	return b, ttlOK
}
