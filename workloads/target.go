package workloads

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

var targetSchema = schema{keys: []schemaKey{
	{"builtin", "configure the built-in reference server, e.g. builtin: {session_ttl: 30m}"},
	{"url", "give the MCP endpoint of a real server, e.g. url: https://staging.example.com/mcp"},
	{"session_ttl", "declare the server's session TTL, e.g. session_ttl: 30m: phases may then wait for it (ttl+1m) and detection delays are estimated from it"},
	{"headers", "list extra request headers, e.g. headers: {Authorization: \"Bearer ${MCP_TOKEN}\"}"},
	{"ca_file", "give a PEM file of certificates to trust for https, e.g. ca_file: ./staging-ca.pem"},
	{"insecure_skip_verify", "set insecure_skip_verify: true to accept any certificate (never in production)"},
	{"http_version", "set the HTTP version clients speak: \"1.1\" (default) or \"2\""},
}}

// urlOnly are the target keys that only a URL target takes.
var urlOnly = []string{"session_ttl", "headers", "ca_file", "insecure_skip_verify", "http_version"}

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
	{"replicas", "set how many replicas run behind the embedded router, e.g. replicas: 3"},
	{"routing", "set how the router picks a replica: sticky (on Mcp-Session-Id), round-robin or hash"},
	{"event_log", "set where the event log lives: per-replica, shared (in memory), or a Redis URL, e.g. redis://127.0.0.1:6379/0"},
}}

// Header is one extra request header of a URL target. Value is as written: ${VAR} references
// are expanded only when the run starts (ExpandHeaders), because they usually name secrets.
type Header struct {
	Name, Value string
	Where       string // file:line:col of the value
}

// managedHeaders are set by the client itself on every request; a workload may not override
// them.
var managedHeaders = []string{"Host", "Content-Type", "Content-Length", "Accept", "Mcp-Session-Id",
	"Mcp-Protocol-Version", "Last-Event-Id", "Connection", "Transfer-Encoding", "Upgrade"}

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
			if k == "session_ttl" {
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
	t.SessionTTL = b.SessionTTL
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
		if v, ok := d.duration(tf); ok && d.checkDuration(tf, v, 0, true) {
			t.SessionTTL, ttlOK = v, true
		}
	} else {
		d.noTTL = "target.session_ttl is not declared; declare the server's session TTL there (e.g. session_ttl: 30m), or write a plain duration"
	}
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
// quoted with any user-info cut out: it may carry a token.
func CheckURL(raw string) string {
	u, err := url.Parse(raw)
	s := shownURL(raw)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a URL (%v); write it as https://host[:port]/path", s, urlErr(err))
	case u.User != nil:
		return "carries credentials; put them in a header instead (headers: {Authorization: \"Bearer ${MCP_TOKEN}\"}), where they are never printed"
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

// shownURL is raw fit for output: any user-info (user:token@) replaced, parseable or not.
func shownURL(raw string) string {
	if i, j := strings.Index(raw, "://"), strings.LastIndex(raw, "@"); i >= 0 && j > i {
		return raw[:i+3] + "REDACTED@" + raw[j+1:]
	}
	return raw
}

// urlErr is why url.Parse refused a URL, without the URL (which may carry credentials).
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

func (d *decoder) headers(f *field) []Header {
	if f == nil {
		return nil
	}
	mn, isMap := f.node.(*ast.MappingNode)
	if !isMap {
		d.errorf(f.node, f.path, "must be a mapping of header names to values, got %s; %s", describe(f.node), f.hint)
		return nil
	}
	var out []Header
	seen := map[string]ast.Node{}
	for i, mv := range mn.Values {
		if i >= maxMappingLen {
			d.errorf(mv, f.path, "has more than %d keys; remove the extra keys", maxMappingLen)
			break
		}
		if isNil(mv) || isNil(mv.Key) {
			continue
		}
		k, ok := d.resolve(mv.Key)
		if !ok {
			continue
		}
		name, isScalar := keyName(k)
		path := f.path + "." + name
		switch {
		case !isScalar || mv.Key.IsMergeKey():
			d.errorf(mv, f.path, "a header name must be a plain word, e.g. Authorization")
			continue
		case !validHeaderName(name):
			d.errorf(mv.Key, path, "%q is not a valid header name; use letters, digits and - (e.g. X-Api-Key)", name)
			continue
		case slices.Contains(managedHeaders, http.CanonicalHeaderKey(name)):
			d.errorf(mv.Key, path, "%s is set by mcpchaos itself on every request; remove it", name)
			continue
		}
		canon := http.CanonicalHeaderKey(name)
		if prev, dup := seen[canon]; dup {
			line, col := position(prev)
			d.errorf(mv.Key, path, "duplicate header %q (first at %d:%d); remove one of them", name, line, col)
			continue
		}
		seen[canon] = mv.Key
		vf := &field{path: path, key: mv.Key, hint: "write the value as a string, e.g. \"Bearer ${MCP_TOKEN}\""}
		vf.node, ok = d.resolve(mv.Value)
		if !ok {
			continue
		}
		var value string
		switch x := vf.node.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
			value = nodeText(x)
		default:
			if value, ok = d.str(vf); !ok {
				continue
			}
		}
		if msg := checkVars(value); msg != "" {
			d.errorf(vf.node, path, "%s", msg)
			continue
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			d.errorf(vf.node, path, "a header value cannot contain a line break; write it on one line")
			continue
		}
		line, col := position(vf.node)
		out = append(out, Header{Name: canon, Value: value, Where: fmt.Sprintf("%s:%d:%d", d.file, line, col)})
	}
	return out
}

// ParseHeader reads a header given on the command line as "Name: value"; the value's ${VAR}
// references are expanded when the run starts, like a workload's.
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok:
		return Header{}, fmt.Errorf("%q: write it as \"Name: value\", e.g. \"Authorization: Bearer ${MCP_TOKEN}\"", redactHeader(s))
	case !validHeaderName(name):
		return Header{}, fmt.Errorf("%q is not a valid header name; use letters, digits and - (e.g. X-Api-Key)", name)
	case slices.Contains(managedHeaders, http.CanonicalHeaderKey(name)):
		return Header{}, fmt.Errorf("%s is set by mcpchaos itself on every request; remove it", name)
	}
	if msg := checkVars(value); msg != "" {
		return Header{}, fmt.Errorf("%s: %s", name, msg)
	}
	return Header{Name: http.CanonicalHeaderKey(name), Value: value, Where: "--header " + name}, nil
}

// redactHeader shows no more of a malformed header flag than its first few characters: it may
// be a secret pasted without its name.
func redactHeader(s string) string {
	if len(s) > 4 {
		return s[:4] + "…"
	}
	return s
}

// ExpandHeaders returns the target's headers with every ${VAR} replaced by the variable's value
// from lookup (os.LookupEnv). An error names the header and the variable, never a value.
func (t Target) ExpandHeaders(lookup func(string) (string, bool)) (http.Header, error) {
	h := http.Header{}
	for _, hd := range t.Headers {
		v, missing := expandVars(hd.Value, lookup)
		if missing != "" {
			return nil, fmt.Errorf("%s: target.headers.%s: environment variable %s is not set; export it before the run (its value is never printed)",
				hd.Where, hd.Name, missing)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, fmt.Errorf("%s: target.headers.%s: the expanded value contains a line break or NUL, which no header may carry; check the variables it names",
				hd.Where, hd.Name)
		}
		h.Add(hd.Name, v)
	}
	return h, nil
}

// expandVars replaces ${NAME} with its value; "$$" is a literal "$". It returns the first name
// lookup does not know. The syntax was checked by checkVars.
func expandVars(s string, lookup func(string) (string, bool)) (string, string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '$':
			b.WriteByte('$')
			i++
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String(), ""
			}
			name := s[i+2 : i+end]
			v, ok := lookup(name)
			if !ok {
				return "", name
			}
			b.WriteString(v)
			i += end
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), ""
}

// checkVars checks the ${VAR} references of a header value; it returns "" or the problem.
func checkVars(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			continue
		}
		switch s[i+1] {
		case '$':
			i++
		case '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return fmt.Sprintf("${ at column %d is not closed; write ${NAME}", i+1)
			}
			name := s[i+2 : i+end]
			if !validVarName(name) {
				return fmt.Sprintf("${%s}: a variable name is letters, digits and _, not starting with a digit", name)
			}
			i += end
		}
	}
	return ""
}

func validVarName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	for _, r := range s {
		if r > 0x7e || r <= 0x20 || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return s != ""
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
			if t.SessionTTL <= 0 {
				return nil, fmt.Errorf("phase %s lasts %q, which needs the target's session TTL; declare it (--session-ttl 30m)",
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
	u, err := url.Parse(raw)
	s := shownURL(raw)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a URL (%v); write it as http://host:8474", s, urlErr(err))
	case u.User != nil:
		return "carries credentials, which a toxiproxy-server does not take; give only a scheme, host and port, e.g. http://127.0.0.1:8474"
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
