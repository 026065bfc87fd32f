package workloads

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/redact"
)

var targetSchema = schema{keys: []schemaKey{
	{"builtin", "configure the built-in reference server, e.g. builtin: {session_ttl: 30m}"},
	{"url", "give the MCP endpoint of a real server, e.g. url: https://staging.example.com/mcp"},
	{"session_ttl", "declare the server's session TTL, e.g. session_ttl: 30m: phases may then wait for it (ttl+1m) and detection delays are estimated from it; session_ttl: none declares that its sessions never expire"},
	{"ttl_mode", "declare how the server's session TTL counts: sliding (from the last request, the default) or absolute (from initialize, however active the session is)"},
	{"headers", "list extra request headers, e.g. headers: {Authorization: \"Bearer ${MCP_TOKEN}\"}"},
	{"ca_file", "give a PEM file of certificates to trust for https, e.g. ca_file: ./staging-ca.pem"},
	{"insecure_skip_verify", "set insecure_skip_verify: true to accept any certificate (never in production)"},
	{"http_version", "set the HTTP version clients speak: \"1.1\" (default) or \"2\""},
}}

// urlOnly are the target keys that only a URL target takes.
var urlOnly = []string{"session_ttl", "ttl_mode", "headers", "ca_file", "insecure_skip_verify", "http_version"}

var builtinSchema = schema{keys: []schemaKey{
	{"session_ttl", "set how long the server keeps a session, e.g. session_ttl: 30m"},
	{"ttl_mode", "set how session_ttl counts: sliding (from the session's last POST, the default) or absolute (from initialize, however active the session is, as gateways that cap a session's lifetime do)"},
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
	{"replicas", "set how many replicas run behind the embedded router, e.g. replicas: 3"},
	{"routing", "set how the router picks a replica: sticky (on Mcp-Session-Id), round-robin or hash"},
	{"event_log", "set where the event log lives: per-replica, shared (in memory), or a Redis URL, e.g. redis://127.0.0.1:6379/0"},
	{"era", "set which protocol generations the server speaks: both (default), session (the 2025 revisions only) or stateless (2026-07-28 only)"},
	{"max_sessions", "set how many sessions the server holds at most, answering initialize 503 beyond, e.g. max_sessions: 10000 (default 0: no cap)"},
	{"leak", "set leak: true to make the server never reclaim a dead session, so its sessions held only grow (docs/session-leaks.md)"},
}}

// target decodes the target section. ttlOK says whether Target.SessionTTL is
// known, so that phases using "ttl" can be resolved (or skipped quietly when
// the TTL itself was reported as wrong).
func (d *decoder) target(f *field) (Target, bool) {
	var t Target
	m := d.mapping(f.node, f.path, &targetSchema)
	uf, bf := m.field("url"), m.field("builtin")
	switch {
	case uf != nil && bf != nil:
		d.urlTarget = true
		d.errorf(uf.key, uf.path, "a target is either builtin or a url, not both; remove one of them")
		return t, false
	case uf != nil:
		d.urlTarget = true
		return d.urlTargetOf(m, uf)
	}
	for _, k := range urlOnly {
		if kf := m.field(k); kf != nil {
			hint := "it belongs to a url target"
			if k == "session_ttl" || k == "ttl_mode" {
				hint = "for the built-in server write it under target.builtin"
			}
			d.errorf(kf.key, kf.path, "%s; %s", k, hint)
		}
	}
	bf = m.require("builtin")
	if bf == nil {
		return t, false
	}
	b, ok := d.builtin(bf)
	t.Builtin = b
	t.SessionTTL, t.TTLMode = b.SessionTTL, b.TTLMode
	return t, ok
}

// urlTargetOf decodes a target given by URL. Its session TTL is optional; without one, phases
// cannot wait for "ttl" (reported there) and detection delays cannot be estimated.
func (d *decoder) urlTargetOf(m *mapping, uf *field) (Target, bool) {
	var t Target
	if s, ok := d.str(uf); ok {
		if msg := CheckURL(s); msg != "" {
			d.errorf(uf.node, uf.path, "%s", msg)
		} else {
			t.URL = s
		}
	}
	line, col := position(uf.node)
	t.Where = fmt.Sprintf("%s:%d:%d", d.file, line, col)
	ttlOK := false
	if tf := m.field("session_ttl"); tf != nil {
		if nodeText(tf.node) == "none" {
			t.NoSessionTTL, ttlOK = true, true // "ttl" in a phase then counts 0
		} else if v, ok := d.duration(tf); ok && d.checkDuration(tf, v, 0, true) {
			t.SessionTTL, ttlOK = v, true
		}
	} else {
		d.noTTL = "target.session_ttl is not declared; declare the server's session TTL there (e.g. session_ttl: 30m), or write a plain duration"
	}
	t.TTLMode = d.ttlMode(m)
	t.Headers = d.headers(m.field("headers"))
	if cf := m.field("ca_file"); cf != nil {
		if s, ok := d.str(cf); ok {
			t.CAFile = d.relative(s)
			if msg := checkCAFile(t.CAFile, s); msg != "" {
				d.errorf(cf.node, cf.path, "%s", msg)
			}
		}
	}
	if sf := m.field("insecure_skip_verify"); sf != nil {
		t.InsecureSkipVerify, _ = d.boolean(sf)
	}
	if hf := m.field("http_version"); hf != nil {
		switch v := nodeText(hf.node); v {
		case "1.1":
		case "2", "2.0":
			t.HTTP2 = true
		default:
			d.errorf(hf.node, hf.path, "unknown HTTP version %q; use \"1.1\" or \"2\"", v)
		}
	}
	if t.CAFile != "" && t.InsecureSkipVerify {
		d.errorf(m.entries["insecure_skip_verify"].key, m.sub("insecure_skip_verify"), "with ca_file the certificate is checked against it; remove one of the two")
	}
	if u, err := url.Parse(t.URL); err == nil && u.Scheme == "http" && (t.CAFile != "" || t.InsecureSkipVerify) {
		d.errorf(uf.node, uf.path, "is plain http, so ca_file and insecure_skip_verify do nothing; use https:// or remove them")
	}
	return t, ttlOK
}

// relative resolves a path written in the workload file against the file's directory.
func (d *decoder) relative(p string) string {
	if filepath.IsAbs(p) || strings.HasPrefix(d.file, "builtin:") {
		return p
	}
	return filepath.Join(filepath.Dir(d.file), p)
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// CheckURL checks a target URL; it returns "" or what is wrong and what to do. The URL is
// quoted as redact.URLString shows it (user-info and query cut out: they may carry a token),
// and never parsed for an error with its credentials in it.
func CheckURL(raw string) string {
	u, err := redact.ParseURL(raw)
	s := redact.URLString(raw)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a URL (%v); write it as https://host[:port]/path", s, urlErr(err))
	case u.User != nil || redact.HiddenUserInfo(raw):
		return "carries credentials; put them in a header instead (headers: {Authorization: \"Bearer ${MCP_TOKEN}\"}), where they are never printed (an @ anywhere after the scheme counts as credentials: a password's #, ? or / ends the host early; an @ in a query is written %40)"
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("%q: the scheme must be http or https; write e.g. https://staging.example.com/mcp", s)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Sprintf("%q has no host; write it as %s://host[:port]/path", s, u.Scheme)
	case badPort(u.Port()):
		return fmt.Sprintf("%q: port %s is not a TCP port; use a port from 1 to 65535", s, u.Port())
	case u.Fragment != "":
		return fmt.Sprintf("%q has a #fragment, which is never sent; remove it", s)
	}
	return ""
}

// urlErr is why redact.ParseURL refused a URL, without the URL.
func urlErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// badPort tells whether a URL's port (empty when the URL names none) is outside 1-65535.
func badPort(p string) bool {
	if p == "" {
		return false
	}
	n, err := strconv.Atoi(p)
	return err != nil || n < 1 || n > 65535
}

// WithTarget returns a copy of w aimed at t instead (the command line's --target), with the
// phases that wait for "ttl" re-timed to t's session TTL and the faults checked against the
// new run length.
func (w *Workload) WithTarget(t Target) (*Workload, error) {
	c := *w
	c.Target = t
	c.Phases = slices.Clone(w.Phases)
	var start time.Duration
	for i := range c.Phases {
		p := &c.Phases[i]
		if i < len(w.ttlOffsets) && w.ttlOffsets[i] != nil {
			if t.SessionTTL <= 0 && !t.NoSessionTTL {
				return nil, fmt.Errorf("phase %s lasts %q, which needs the target's session TTL; declare it (--session-ttl 30m, or --session-ttl none for a server whose sessions never expire)",
					p.Name, "ttl"+fmtOffset(*w.ttlOffsets[i]))
			}
			p.Duration = t.SessionTTL + *w.ttlOffsets[i]
			if p.Duration <= 0 {
				return nil, fmt.Errorf("phase %s lasts ttl%s, which comes to %s with a session TTL of %s; a phase must last more than 0s",
					p.Name, fmtOffset(*w.ttlOffsets[i]), fmtDur(p.Duration), fmtDur(t.SessionTTL))
			}
		}
		p.Start = start
		start += p.Duration
	}
	c.Duration = start
	for _, f := range c.Faults {
		if f.At >= c.Duration || f.For > 0 && f.At+f.For > c.Duration {
			return nil, fmt.Errorf("%s: fault %s (at %s, for %s) no longer fits in the run, which lasts %s with a session TTL of %s; adjust the fault or the TTL",
				f.Where, f.Name, fmtDur(f.At), fmtDur(f.For), fmtDur(c.Duration), fmtDur(t.SessionTTL))
		}
	}
	return &c, nil
}

func fmtOffset(d time.Duration) string {
	switch {
	case d > 0:
		return "+" + fmtDur(d)
	case d < 0:
		return "-" + fmtDur(-d)
	}
	return ""
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
	b.TTLMode = d.ttlMode(m)
	if m.field("era") != nil { // absent: "", the server's default (both eras)
		b.Era = m.oneOf("era", eras)
	}
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
	b.NotifyInterval = m.loopDuration("notify_interval", defaultNotifyInterval, minServerTick, true)
	b.Keepalive = m.loopDuration("keepalive", 0, minServerTick, true)
	b.Retry = m.durationAtLeast("retry", 0, 0, false)
	if rf := m.field("retry"); rf != nil && b.Retry%time.Millisecond != 0 {
		d.errorf(rf.node, rf.path, "%s is not a whole number of milliseconds, which is all SSE's retry field can carry; round it, e.g. %s",
			fmtDur(b.Retry), fmtDur(max(b.Retry.Round(time.Millisecond), time.Millisecond)))
	}
	b.PostResponse = m.oneOf("post_response", postResponses)
	b.MaxSessions = int(m.intIn("max_sessions", 0, 0, maxMaxSessions))
	if lf := m.field("leak"); lf != nil {
		b.Leak, _ = d.boolean(lf)
	}
	d.topology(m, b)
	return b, ttlOK
}

// toxiproxyURL reads the URL of an external toxiproxy-server.
func (d *decoder) toxiproxyURL(f *field) string {
	s, ok := d.str(f)
	if !ok {
		return ""
	}
	if msg := CheckToxiproxyURL(s); msg != "" {
		d.errorf(f.node, f.path, "%s", msg)
		return ""
	}
	return s
}

// CheckToxiproxyURL checks the URL of a toxiproxy-server's API; it returns "" or what is wrong
// and what to do.
func CheckToxiproxyURL(raw string) string {
	u, err := redact.ParseURL(raw)
	s := redact.URLString(raw)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a URL (%v); write it as http://host:8474", s, urlErr(err))
	case u.User != nil || redact.HiddenUserInfo(raw):
		return "carries credentials (an @ after the scheme), which a toxiproxy-server does not take; give only a scheme, host and port, e.g. http://127.0.0.1:8474"
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("%q is not an http URL; write the toxiproxy-server's API as http://host:port, e.g. http://127.0.0.1:8474", s)
	case u.Hostname() == "":
		return fmt.Sprintf("%q has no host; write it as http://host:port, e.g. http://127.0.0.1:8474", s)
	case badPort(u.Port()):
		return fmt.Sprintf("%q: port %s is not a TCP port; use a port from 1 to 65535", s, u.Port())
	case u.Path != "" && u.Path != "/" || u.RawQuery != "":
		return fmt.Sprintf("%q has more than a scheme, host and port; give only those, e.g. http://127.0.0.1:8474", s)
	}
	return ""
}

// ttlMode reads ttl_mode; "" when absent, which means sliding (the default every server and
// existing workload assumes, so that it adds nothing to a workload that does not say it).
func (d *decoder) ttlMode(m *mapping) string {
	if m.field("ttl_mode") == nil {
		return ""
	}
	return m.oneOf("ttl_mode", ttlModes)
}
