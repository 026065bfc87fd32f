package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// A run against a server given by URL first opens one session of its own, straight to the
// target (as inspect does, in well under a second), before any proxy or client starts: a URL
// that does not answer as an MCP server stops the run there rather than after the whole plan,
// and what the run needs to know is learnt once: whether the server hands out session ids,
// and which tools it offers (so that a tool it lacks, or arguments its schema refuses, are
// reported at the workload's line before anything runs).

// preflightTimeout bounds the preflight: a server that cannot open one session in this long
// would not give the run's clients any either.
const preflightTimeout = 10 * time.Second

// toolInfo is one tool of tools/list.
type toolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// preflight is what the run learnt of its target before it started.
type preflight struct {
	sessionIDs  bool // initialize answered with an Mcp-Session-Id
	substitutes bool // a ping under an id the server never issued got a result
	// unknownStatus is the status that ping got when it was refused (0: not asked): what the
	// server answers a session it does not know, as it may answer a dead one.
	unknownStatus int
	tools         []toolInfo // what tools/list answered
}

// preflight opens one session on the target (a request context on a stateless one), lists
// its tools and ends the session. Any failure is the run's: the target is not an MCP server
// this client can speak to.
func (r *runner) preflight(ctx context.Context, conn wire.Conn, gen wire.Negotiated) (*preflight, error) {
	hc, err := wire.NewHTTPClient(conn)
	if err != nil {
		return nil, configErr("target: %w", err)
	}
	defer hc.CloseIdleConnections()
	g := r.w.Groups[0]
	ep := &wire.Endpoint{URL: conn.URL.String(), HTTP: hc, Protocol: g.Protocol, Generation: gen.Generation,
		RequestTimeout: min(g.RequestTimeout, preflightTimeout), MaxBody: 4 << 20, MaxEvent: 1 << 20, ClientName: "mcpchaos-preflight"}
	if gen.Generation == wire.Stateless {
		ep.Protocol = gen.Protocol
	}
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	s, rep, err := ep.Initialize(ctx)
	if err != nil {
		return nil, fmt.Errorf("target %s does not answer as an MCP server: initialize got %s; nothing was run (mcpchaos inspect %s says what it answers)",
			r.tgt.label, describeFailure(rep, err), r.tgt.label)
	}
	pf := &preflight{sessionIDs: s.ID != ""}
	defer func() { _, _ = s.Delete(context.WithoutCancel(ctx)) }()
	lrep, err := s.ListTools(ctx)
	if err != nil || !lrep.OK() {
		return nil, fmt.Errorf("target %s: tools/list got %s, so no tool call can be planned; nothing was run", r.tgt.label, describeFailure(lrep, err))
	}
	var res struct {
		Tools []toolInfo `json:"tools"`
	}
	if err := json.Unmarshal(lrep.Result, &res); err != nil {
		return nil, fmt.Errorf("target %s: tools/list result is not a tool list (%v); nothing was run", r.tgt.label, err)
	}
	pf.tools = res.Tools
	if pf.sessionIDs {
		pf.checkSubstitution(ctx, s)
	}
	return pf, nil
}

// checkSubstitution pings under an id the server never issued (the session's own with one hex
// digit changed, so that a server checking only the id's form accepts it): a result means the
// server serves any id as a live session, so a dead one looks alive too (inspect's
// silent_substitution).
func (pf *preflight) checkSubstitution(ctx context.Context, s *wire.Session) {
	forged := forgeID(s.ID)
	if forged == "" {
		return
	}
	real := s.ID
	s.ID = forged
	rep, err := s.Ping(ctx)
	s.ID = real
	switch {
	case err == nil && rep.OK():
		pf.substitutes = true
	case err == nil && rep != nil:
		pf.unknownStatus = rep.Status
	}
}

// forgeID is id with its last hex digit changed, "" when it has none.
func forgeID(id string) string {
	b := []byte(id)
	for i := len(b) - 1; i >= 0; i-- {
		switch c := b[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			if c == '0' {
				b[i] = '1'
			} else {
				b[i] = '0'
			}
			return string(b)
		}
	}
	return ""
}

// describeFailure says what a request got instead of a result.
func describeFailure(rep *wire.Reply, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case rep == nil:
		return "no answer"
	case rep.Status/100 != 2:
		return fmt.Sprintf("HTTP %d %s", rep.Status, clip(strings.TrimSpace(rep.Body), 120))
	case rep.RPCError != nil:
		return fmt.Sprintf("JSON-RPC error %d: %s", rep.RPCError.Code, clip(rep.RPCError.Message, 120))
	}
	return "a reply without a result"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// needsSessions says why the workload cannot run against a target that keeps no sessions, ""
// when it can: waiting for a session TTL means nothing there.
func needsSessions(w *workloads.Workload) string {
	if p := w.WaitsForTTL(); p != "" {
		return fmt.Sprintf("this workload waits for the session TTL (phase %s) to test what clients make of dead sessions and their replays, which needs sessions", p)
	}
	return ""
}

// destructive words: a tool whose name or description says one of them is never called in
// place of the tool a built-in workload names.
var destructive = []string{"delete", "remove", "drop", "reset", "write", "destroy", "erase", "purge", "truncate", "kill"}

// streams guesses from its name and description whether a tool streams its reply (reports
// progress, sends notifications): its replies then carry event ids, a cursor.
func (t toolInfo) streams() bool {
	text := strings.ToLower(t.Name + " " + t.Description)
	return slices.ContainsFunc([]string{"progress", "stream", "notif", "long", "slow"}, func(w string) bool { return strings.Contains(text, w) })
}

func (t toolInfo) destructive() bool {
	text := strings.ToLower(t.Name + " " + t.Description)
	return slices.ContainsFunc(destructive, func(w string) bool { return strings.Contains(text, w) })
}

// streamingTools names the tools of pf that say they stream.
func (pf *preflight) streamingTools() []string {
	var out []string
	for _, t := range pf.tools {
		if t.streams() && !t.destructive() {
			out = append(out, t.Name)
		}
	}
	return out
}

func (pf *preflight) names() string {
	n := make([]string, len(pf.tools))
	for i, t := range pf.tools {
		n[i] = t.Name
	}
	return strings.Join(n, ", ")
}

// resolveTools checks every group's tool against what the server offers: a tool the
// workload names and the server lacks is an error at the workload's line; a tool only
// defaulted (a built-in workload, a group without `tool`) is replaced by one the server offers
// that is safe to call (streaming first), and said so. Arguments the workload gives are
// checked against the tool's inputSchema unless schemaCheck is off.
func (r *runner) resolveTools(pf *preflight) error {
	w := *r.w
	w.Groups = slices.Clone(r.w.Groups)
	for i := range w.Groups {
		g := &w.Groups[i]
		k := slices.IndexFunc(pf.tools, func(t toolInfo) bool { return t.Name == g.Tool })
		if k < 0 {
			if g.ToolWhere != "" {
				return configErr("%s: group %s: tool %q is not offered by the server at %s; it offers: %s", g.ToolWhere, g.Name, g.Tool, r.tgt.label, pf.names())
			}
			k = pf.substitute()
			if k < 0 {
				return configErr("group %s: the server at %s does not offer tool %q, and none of the tools it offers (%s) is safe to call in its place; name one with --tool", g.Name, r.tgt.label, g.Tool, pf.names())
			}
			why := "the first it lists whose name and description say nothing destructive"
			if pf.tools[k].streams() {
				why = "it says it streams or reports progress, so its replies can carry event ids"
			}
			line := fmt.Sprintf("group %s: the server does not offer tool %q; calling %q instead (%s); name another with --tool", g.Name, g.Tool, pf.tools[k].Name, why)
			fmt.Fprintln(r.opts.stderr, "mcpchaos: "+line)
			r.tgt.notes = append(r.tgt.notes, line)
			g.Tool = pf.tools[k].Name
			g.Arguments, g.ArgumentsWhere = nil, "" // the workload's arguments were for another tool
		}
		if g.Arguments != nil && !r.plan.noSchemaCheck {
			if err := checkArgs(pf.tools[k], g.Arguments, g.Name); err != nil {
				where := g.ArgumentsWhere
				if where == "" {
					where = "--tool-args"
				}
				return configErr("%s: group %s: the arguments do not fit tool %s's inputSchema: %v (--no-schema-check sends them anyway)", where, g.Name, g.Tool, err)
			}
		}
	}
	r.w = &w
	return nil
}

// substitute is the index of the tool to call in place of a built-in's: the first that
// streams, else the first listed; never one that sounds destructive; -1 when none is safe.
func (pf *preflight) substitute() int {
	safe := func(t toolInfo) bool { return !t.destructive() }
	if k := slices.IndexFunc(pf.tools, func(t toolInfo) bool { return safe(t) && t.streams() }); k >= 0 {
		return k
	}
	return slices.IndexFunc(pf.tools, safe)
}

// checkArgs validates the group's arguments, placeholders filled as the first call fills
// them, against the tool's inputSchema. A schema this library cannot read is not held
// against the arguments.
func checkArgs(t toolInfo, args map[string]any, group string) error {
	if len(t.InputSchema) == 0 || string(t.InputSchema) == "null" {
		return nil
	}
	var s jsonschema.Schema
	if json.Unmarshal(t.InputSchema, &s) != nil {
		return nil
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false})
	if err != nil {
		return nil
	}
	// Through JSON, as the wire carries them: numbers become float64, which the validator
	// reads, whatever type the workload decoder gave them.
	b, err := json.Marshal(fleet.SampleArgs(args, group))
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return rs.Validate(v)
}
