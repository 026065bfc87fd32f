// Package inspect learns the regime of a real MCP server before any load: does its GET validate
// the session, does a dead session's cursor still replay (the seed's trap), which status does a
// dead session get, which requests are valid liveness probes, does an open stream keep a session
// alive, does an idle stream get keepalives. It opens a few sessions, takes cursors by every
// means the server offers (cursor.go), kills the sessions (DELETE, and with a declared TTL by
// waiting it out: deaths.go), tries replays through the dead id and a live session (replay.go),
// watches an idle stream (keepalive.go), and judges (judge, below).
//
// It is built on wire.Session (clients/wire) and sends only a handful of requests, to one server, one at a
// time (the keepalive watch aside); the only tools it calls are up to three picked by tools.go,
// never one named like a destructive one. It judges what it sees but never retries to make a
// server look better: it tries again only what told nothing (an answer still coming when its
// wait ended, a session that died of its TTL before inspect's step), a bounded number of
// times, so that a slow server or machine gives the fingerprint an idle one does; it says
// "unknown" (nil), never "no", when it could not tell; it reads
// every answer within bounds and never panics on one: an answer that breaks the protocol is
// recorded as a violation (reply.go), and nothing else is made of it.
package inspect

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/clients/wire"
)

// Fingerprint is the regime of one server. A nil field is "could not tell" (with a note saying
// why), never "no".
type Fingerprint struct {
	URL                string `json:"url"`
	Generation         string `json:"generation"` // "session" or "stateless"
	NegotiatedProtocol string `json:"negotiated_protocol"`
	// SupportedVersions are the versions the server named when asked server/discover.
	SupportedVersions []string `json:"supported_versions,omitempty"`
	// Eras are the protocol generations the server speaks ("session": 2025-03-26 to
	// 2025-11-25; "stateless": 2026-07-28), whichever was inspected; PreferredProtocol is the
	// version it names first in server/discover ("" when it does not answer server/discover:
	// a session-family server only).
	Eras              []string `json:"eras"`
	PreferredProtocol string   `json:"preferred_protocol,omitempty"`
	// SessionIDs says whether initialize gave a Mcp-Session-Id: without one there are no
	// sessions to lose (a stateless server of the session family).
	SessionIDs bool `json:"session_ids"`
	// GetValidatesSession: does a GET without Last-Event-ID fail for a dead session?
	GetValidatesSession *bool `json:"get_validates_session"`
	// DeadStatus is the status a dead session got, per request kind.
	DeadStatus DeadStatus `json:"dead_status"`
	// ReplayAfterDeath: does a GET with the dead session's own id and cursor answer 200?
	ReplayAfterDeath *bool `json:"replay_after_death"`
	// ReplayedEvents counts the dead session's events that replay delivered.
	ReplayedEvents *int `json:"replayed_events,omitempty"`
	// CursorVia says how inspect got the cursors it replayed: the priming event of a ping
	// reply, a tool call sent with a progress token, the GET stream, ... ("" when none came).
	CursorVia string `json:"cursor_via,omitempty"`
	// CrossSessionReplay: does a live session's GET with a dead session's cursor replay the dead
	// session's events?
	CrossSessionReplay *bool `json:"cross_session_replay"`
	// SilentSubstitution: is a POST with a dead session's id served with 2xx as if alive?
	SilentSubstitution *bool `json:"silent_substitution"`
	// ProbeMethods says, for ping and tools/list, what a dead session got, and so whether each
	// is a valid liveness probe (the server must reject it on a dead session).
	ProbeMethods map[string]ProbeMethod `json:"probe_methods"`
	// OpenStreamHoldsSession: does an open GET keep an idle session alive past the TTL?
	// Needs a declared TTL.
	OpenStreamHoldsSession *bool `json:"open_stream_holds_session"`
	// TTLMode is how the TTL counts (needs --ttl): "sliding" when a session pinged every
	// quarter of the TTL outlived it, "absolute" when it was refused at the TTL however
	// active (a lifetime counted from initialize); "" when inspect could not tell.
	TTLMode string `json:"ttl_mode,omitempty"`
	// StreamKeepaliveMS is the interval of comments or events on an idle GET stream, or null
	// when none came while watching: exposure to load-balancer idle timeouts.
	StreamKeepaliveMS *int64 `json:"stream_keepalive_ms"`
	// KeepaliveKind is what kept the idle stream alive: "comment", "ping" (a server ping
	// request) or "notification".
	KeepaliveKind string `json:"keepalive_kind,omitempty"`
	// KeepaliveWatchedMS is how long the idle stream was to be watched (0: no GET stream).
	KeepaliveWatchedMS int64 `json:"keepalive_watched_ms"`
	// StreamClosedMS is when the server ended the watched idle stream, if it did before the
	// watch ended: the keepalive is then unknown past that time, not absent.
	StreamClosedMS *int64 `json:"stream_closed_ms,omitempty"`
	// StreamCutMS is when inspect itself stopped reading the watched stream, because an event
	// passed its cap (the server did not close it: an event too large to read did).
	StreamCutMS *int64 `json:"stream_cut_ms,omitempty"`
	// KeepaliveSessionsDied counts the watched sessions that died of the declared TTL while
	// their stream was watched, though inspect pinged them (its pings came late: a loaded
	// machine or server). When every watch ended so, the keepalive is unknown, not absent.
	KeepaliveSessionsDied int `json:"keepalive_sessions_died,omitempty"`
	// ServerRequests counts the requests the server sent inspect, by method; each was
	// answered (ping and roots/list served, the rest refused with an error).
	ServerRequests map[string]int `json:"server_requests,omitempty"`
	// MissingSessionStatus is what a request without Mcp-Session-Id got.
	MissingSessionStatus *int `json:"missing_session_status"`
	missingSessionServed bool
	// DuplicateGetStatus is what a second GET stream of one session got while the first was
	// open.
	DuplicateGetStatus *int `json:"duplicate_get_status"`
	// AfterTTL is what a session killed by its TTL got (with a declared TTL): the seed's own
	// kind of death, which a server may answer differently from a DELETE.
	AfterTTL *Death `json:"after_ttl,omitempty"`
	// ProtocolViolations are the answers that were not what the protocol allows (HTML or
	// garbage where JSON-RPC or SSE was due, a result that is not an object, a response with
	// neither result nor error, an oversized body): the facts they touched are unknown.
	ProtocolViolations []string `json:"protocol_violations,omitempty"`
	// ServerConduct is what the server did that no healthy server does, in words, the cause
	// first (wire.Conduct, then the protocol violations): the table's first problem lines.
	ServerConduct []string `json:"server_conduct,omitempty"`
	Verdict       Verdict  `json:"verdict"`
	Notes         []string `json:"notes,omitempty"`
}

// DeadStatus is the status a dead session's requests got; KilledBy says how it died ("delete",
// or "ttl" when the server refused the DELETE and a TTL was declared).
type DeadStatus struct {
	KilledBy      string `json:"killed_by,omitempty"`
	Post          *int   `json:"post"`
	Get           *int   `json:"get"`
	GetWithCursor *int   `json:"get_with_cursor"`
	Delete        *int   `json:"delete"`
}

// Death is what one kind of death looked like from the client.
type Death struct {
	Expired bool `json:"expired"` // the session was found dead after the TTL
	// ExpiryUnseen: the session was served after the TTL, but the server serves any id (a
	// session killed by DELETE was served too), so whether it expired cannot be seen.
	ExpiryUnseen        bool  `json:"expiry_unseen,omitempty"`
	Post                *int  `json:"post"`
	Get                 *int  `json:"get"`
	GetWithCursor       *int  `json:"get_with_cursor"`
	ReplayAfterDeath    *bool `json:"replay_after_death"`
	SilentSubstitution  *bool `json:"silent_substitution"`
	GetValidatesSession *bool `json:"get_validates_session"`
}

// ProbeMethod is one candidate probe on a dead session.
type ProbeMethod struct {
	DeadStatus *int `json:"dead_status"`
	// Valid says the server rejected it on a dead session: it is a liveness probe.
	Valid *bool `json:"valid_probe"`
}

// Verdict names the hazards found and what to put in a workload.
type Verdict struct {
	Hazards []Hazard `json:"hazards"`
	// Probe is the recommended probe method ("ping" or "tools/list"), or "" when neither is
	// valid.
	Probe string `json:"probe"`
	// DeadStatuses are the statuses to list as dead_statuses in a workload.
	DeadStatuses []int `json:"dead_statuses"`
}

// Hazard is one finding, with a one-line explanation.
type Hazard struct {
	Name        string `json:"name"`
	Explanation string `json:"explanation"`
}

// judge derives the verdict from the facts.
func (fp *Fingerprint) judge() {
	v := Verdict{Hazards: []Hazard{}}
	add := func(name, format string, args ...any) {
		v.Hazards = append(v.Hazards, Hazard{Name: name, Explanation: fmt.Sprintf(format, args...)})
	}
	if fp.Generation == "stateless" {
		only := "speaks only"
		if slices.Contains(fp.Eras, "session") {
			only = "was inspected (--protocol) in" // it speaks the session family too: Eras
		}
		add("stateless", "the server %s the stateless revision %s: no sessions, no resumption; a fault loses in-flight requests, which clients must re-issue", only, fp.NegotiatedProtocol)
		fp.Verdict = v
		return
	}
	if !fp.SessionIDs {
		add("no_sessions", "initialize gave no Mcp-Session-Id: the server keeps no sessions, so none can die; a dropped response loses its request")
	}
	replay := isTrue(fp.ReplayAfterDeath) || fp.AfterTTL != nil && isTrue(fp.AfterTTL.ReplayAfterDeath)
	if replay {
		add("replay_lies", "a replay with a dead session's id and cursor answers 200: a client that trusts it believes a dead session alive (the seed's trap); probe after every replay")
	}
	if isTrue(fp.CrossSessionReplay) {
		add("cross_session_replay", "a live session's replay from a dead session's cursor delivers the dead session's events: they may reference resources already released")
	}
	if isFalse(fp.GetValidatesSession) || fp.AfterTTL != nil && isFalse(fp.AfterTTL.GetValidatesSession) {
		add("permissive_get", "a GET on a dead session answers 200: reopening a stream proves nothing about the session")
	}
	if isTrue(fp.SilentSubstitution) || fp.AfterTTL != nil && isTrue(fp.AfterTTL.SilentSubstitution) {
		add("silent_substitution", "a request carrying a dead session's id is served with 2xx as if the session were alive: no client can detect the death")
	}
	if fp.TTLMode == "absolute" {
		add("absolute_ttl", "a session is ended a TTL after initialize however active it is: clients must re-initialize on schedule or meet a dead session mid-work; declare ttl_mode: absolute beside session_ttl in a workload")
	}
	if isFalse(fp.OpenStreamHoldsSession) {
		add("stream_does_not_hold_session", "an open GET stream does not keep an idle session alive: clients that only listen lose their sessions after the TTL")
	}
	if fp.StreamKeepaliveMS == nil && fp.SessionIDs && fp.KeepaliveWatchedMS > 0 && fp.StreamClosedMS == nil && fp.StreamCutMS == nil {
		add("no_keepalive", "an idle GET stream got nothing for %s: a load balancer's idle timeout will cut it (a drop) unless traffic flows", fmtMS(fp.KeepaliveWatchedMS))
	}
	if fp.missingSessionServed && fp.SessionIDs {
		add("missing_session_served", "a request without Mcp-Session-Id is served (%d) instead of refused with 400", *fp.MissingSessionStatus)
	}
	dead := map[int]bool{}
	for _, d := range []*Death{{Post: fp.DeadStatus.Post, Get: fp.DeadStatus.Get, GetWithCursor: fp.DeadStatus.GetWithCursor}, fp.AfterTTL} {
		if d == nil {
			continue
		}
		for _, p := range []*int{d.Post, d.Get, d.GetWithCursor} {
			if deathStatus(p, p != d.Post) {
				dead[*p] = true
			}
		}
	}
	for s := range dead {
		v.DeadStatuses = append(v.DeadStatuses, s)
	}
	slices.Sort(v.DeadStatuses)
	switch {
	case len(v.DeadStatuses) > 0 && !dead[404] && servedAnyID(fp):
		// mcp-go's default id mode: the dead id itself is served; only a resume of the dead
		// session's cursor is refused, by the event store, not by a session check.
		add("nonstandard_dead_status", "a dead session's id is served 2xx on POST, GET and DELETE (the server serves any id); only a resume with its cursor gets %s: list it in dead_statuses to see refused resumes, but no other request shows a death",
			joinInts(v.DeadStatuses))
	case len(v.DeadStatuses) > 0 && !dead[404]:
		add("nonstandard_dead_status", "a dead session gets %s instead of 404: list it in the workload's dead_statuses, or clients misread deaths", joinInts(v.DeadStatuses))
	}
	if len(v.DeadStatuses) == 0 {
		v.DeadStatuses = []int{404}
	}
	for _, m := range []string{"ping", "tools/list"} {
		if pm, ok := fp.ProbeMethods[m]; ok && isTrue(pm.Valid) {
			v.Probe = m
			break
		}
	}
	if v.Probe == "" && fp.SessionIDs && len(fp.ProbeMethods) > 0 && !slices.ContainsFunc(slices.Collect(maps.Values(fp.ProbeMethods)), func(pm ProbeMethod) bool { return pm.Valid == nil }) {
		add("no_valid_probe", "neither ping nor tools/list is refused on a dead session: no probe can tell a live session from a dead one")
	}
	if n := len(fp.ProtocolViolations); n > 0 {
		count := fmt.Sprint(n)
		if n >= maxViolations {
			count += " or more"
		}
		add("protocol_violation", "the server answered %s request(s) with what the protocol does not allow (first: %s): the facts those answers touched are unknown", count, fp.ProtocolViolations[0])
	}
	fp.Verdict = v
}

// deathStatus says whether a status a dead session got can tell a client of the death: a 4xx,
// but on a GET neither 405 (no GET streams at all) nor 409 (a stream already open, the SDKs'
// answer on a live session too). A 5xx is the server failing, not a verdict on the session: a
// server that answers 500 to everything must not make clients count 500s as deaths.
func deathStatus(p *int, get bool) bool {
	switch {
	case p == nil || *p/100 != 4:
		return false
	case get && (*p == 405 || *p == 409):
		return false
	}
	return true
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }

func ptr[T any](v T) *T { return &v }

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func fmtMS(ms int64) string {
	if ms%1000 == 0 {
		return fmt.Sprintf("%ds", ms/1000)
	}
	return fmt.Sprintf("%dms", ms)
}

// servedAnyID says that a session killed by DELETE was served 2xx on POST and GET: the server
// serves any id, so its dead sessions show only where something else refuses them.
func servedAnyID(fp *Fingerprint) bool {
	ok := func(p *int) bool { return p != nil && *p/100 == 2 }
	return isTrue(fp.SilentSubstitution) && ok(fp.DeadStatus.Post) && (fp.DeadStatus.Get == nil || ok(fp.DeadStatus.Get))
}

// eras lists the generations a server speaks from what server/discover named (none: it does
// not know the method, the session family only) and the generation negotiated.
func eras(supported []string, negotiated string) []string {
	var session, stateless bool
	for _, v := range supported {
		session = session || wire.Supported(v) || strings.HasPrefix(v, "2025-") || strings.HasPrefix(v, "2024-")
		stateless = stateless || v == wire.ProtocolStateless
	}
	if len(supported) == 0 {
		session = negotiated == "session"
		stateless = negotiated == "stateless"
	}
	var out []string
	if session {
		out = append(out, "session")
	}
	if stateless {
		out = append(out, "stateless")
	}
	return out
}
