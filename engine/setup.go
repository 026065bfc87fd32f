package engine

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/clients/mcpgoworker"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/tsworker"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/servertime"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/redact"
	"github.com/mcpchaos/mcpchaos/refserver"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// targetInfo is what setUp learnt about the target, for the export.
type targetInfo struct {
	label      string // "builtin", or the target's URL
	estimated  bool   // deaths are estimated from a declared TTL, not known
	prefix     string // the run's proxy name prefix on an external toxiproxy-server
	toxiproxy  string // its API URL
	generation wire.Generation
	noIDs      bool   // a session-family server that hands out no session ids: no sessions
	other      string // the generation the target also speaks, not measured (dualgen.go)
	pf         *preflight
	notes      []string
}

// setUp starts the target (or reaches it by URL), one proxy per group in front of it, and the
// fleets. Whatever it created before failing, r.close removes.
func (r *runner) setUp(ctx context.Context) error {
	conn, truth, err := r.reachTarget()
	if err != nil {
		return err
	}
	if err := r.prepareActions(); err != nil {
		return err
	}
	if err := r.startInjector(ctx); err != nil {
		return err
	}
	gen, err := r.negotiate(ctx, conn)
	if err != nil {
		return err
	}
	if r.w.Target.Builtin == nil {
		if truth, err = r.checkTarget(ctx, conn, gen, truth); err != nil {
			return err
		}
	}
	for _, g := range r.w.Groups {
		if err := r.addGroup(ctx, g, conn, gen, truth); err != nil {
			return err
		}
	}
	return nil
}

// addGroup starts a group's proxy and builds its fleet and recorder.
func (r *runner) addGroup(ctx context.Context, g workloads.GroupSpec, conn wire.Conn, gen wire.Negotiated, truth truth.Truth) error {
	listen, err := r.inj.AddProxy(ctx, g.Name, wire.HostPort(conn.URL))
	if err != nil {
		return fmt.Errorf("group %s: starting its proxy: %w", g.Name, err)
	}
	r.proxies[g.Name] = listen
	pol, err := policy.New(g.Policy, policy.Config{Retries: g.Retries})
	if err != nil {
		return configErr("group %s: %w", g.Name, err)
	}
	if g.Policy == policy.ClientTSSDK || g.Policy == policy.ClientTSClient {
		if err := tsworker.Check(g.Policy); err != nil {
			return configErr("group %s: %w", g.Name, err)
		}
	}
	if g.Policy == policy.ClientMCPGo16 {
		if err := mcpgoworker.Check(g.Policy); err != nil {
			return configErr("group %s: %w", g.Name, err)
		}
	}
	gc := conn
	gc.Dial = listen
	gc.MaxConns = g.Clients * (g.Concurrency + 1)
	hc, err := wire.NewHTTPClient(gc)
	if err != nil {
		return configErr("target: %w", err)
	}
	ep := &wire.Endpoint{
		URL:            conn.URL.String(),
		HTTP:           hc,
		Protocol:       g.Protocol,
		Generation:     gen.Generation,
		RequestTimeout: g.RequestTimeout,
		MaxBody:        wire.MaxBody,
		MaxEvent:       wire.MaxEvent,
		ClientName:     "mcpchaos-" + g.Name,
	}
	if gen.Generation == wire.Stateless {
		ep.Protocol = gen.Protocol
	}
	rec := metrics.NewRecorder(g.Name, g.Policy, g.Clients)
	r.meterServer(g.Name, gc, rec)
	fc := fleet.GroupConfig{
		Name:         g.Name,
		Clients:      g.Clients,
		Ramp:         g.Ramp,
		Policy:       pol,
		Probe:        g.Probe,
		DeadStatuses: g.DeadStatuses,
		RetryBackoff: g.RetryBackoff,
		CallEvery:    g.CallEvery,
		Tool:         g.Tool,
		Concurrency:  g.Concurrency,
		// How the clients behave on the wire (fleet.GroupConfig, workloads/clientkeys.go).
		Arguments: g.Arguments, NoProgressTokens: g.NoProgressTokens, LogLevel: g.LogLevel,
		Roots: g.Roots, Replies: g.ServerReplies,
		// ReconnectDelay and ReconnectMax: fleet.NewFleet's defaults, their one source.
		Kind: g.Policy, LibraryOptions: g.LibraryOptions,
		Phases:  len(r.w.Phases),
		PhaseAt: phaseAt(r.w.Phases),
	}
	if c := g.Churn; c != nil { // clients that come and go (clients/fleet/churn.go)
		fc.Churn = fleet.Churn{Every: c.Every, Abandon: c.Abandon, On: r.w.ChurnOn(c)}
	}
	r.recs = append(r.recs, rec)
	fl := fleet.New(fc, ep, rec, truth, callsOn(r.w.Phases))
	r.fleets = append(r.fleets, fl)
	if err := fl.Prepare(ctx); err != nil { // node workers of a TypeScript library
		return fmt.Errorf("group %s: %w", g.Name, err)
	}
	return nil
}

// reachTarget starts the reference server, or prepares the connection to a target by URL:
// headers expanded from the environment, certificates loaded. It returns the Truth about
// session deaths: exact from the reference server, estimated from a declared TTL otherwise.
func (r *runner) reachTarget() (wire.Conn, truth.Truth, error) {
	t := r.w.Target
	if t.Builtin != nil {
		inst, err := r.startBuiltin(configOf(t.Builtin).WithDefaults())
		if err != nil {
			return wire.Conn{}, nil, fmt.Errorf("starting the reference server: %w", err)
		}
		r.inst = inst
		u, err := url.Parse(inst.URL)
		if err != nil {
			return wire.Conn{}, nil, err
		}
		r.tgt.label = "builtin"
		return wire.Conn{URL: u}, truth.Func(inst.DeathTime), nil
	}
	u, err := redact.ParseURL(t.URL)
	if err != nil {
		return wire.Conn{}, nil, configErr("%s: target.url: %w", t.Where, err)
	}
	header, err := t.ExpandHeaders(os.LookupEnv)
	if err != nil {
		return wire.Conn{}, nil, &ConfigError{Err: err}
	}
	conn := wire.Conn{URL: u, Header: header, InsecureSkipVerify: t.InsecureSkipVerify, HTTP2: t.HTTP2}
	conn.Redact = conn.Secrets() // once, for the preflight and every group's client
	if t.CAFile != "" {
		if conn.RootCAs, err = wire.LoadCAFile(t.CAFile); err != nil {
			return wire.Conn{}, nil, configErr("target.ca_file: %w", err)
		}
	}
	r.tgt.label = redact.URL(u)
	r.tgt.estimated = true
	if t.NoSessionTTL {
		r.tgt.notes = append(r.tgt.notes, "the target declares session_ttl: none (its sessions never expire by idling): no session death is estimated, phases that wait for ttl last only their offset, and every death counted is one the server's answers revealed")
	} else if t.SessionTTL <= 0 {
		r.tgt.notes = append(r.tgt.notes, "the target declares no session_ttl: session deaths could not be estimated, so detection_delay, dead-session counts and false_healthy_seconds cover only what the server's answers revealed")
	}
	est := truth.NewEstimated(t.SessionTTL)
	if t.TTLMode == vocab.TTLAbsolute && t.SessionTTL > 0 {
		est.Regime.AbsoluteTTL = true
		r.tgt.notes = append(r.tgt.notes, fmt.Sprintf("the target declares ttl_mode: absolute: each session's death is estimated %s after its first success (initialize), however active it was", t.SessionTTL))
	}
	return conn, est, nil
}

// meterServer times the server's replies to group's proxy by the kernel's clock, into the
// group's server_latency (docs/gate.md, "Latency the runner cannot move"): on the relay's
// connection to the server, where Toxiproxy runs on this machine, over HTTP/1.1 (an HTTP/2
// connection multiplexes its exchanges, which a connection's request and reply cannot time).
func (r *runner) meterServer(group string, conn wire.Conn, rec *metrics.Recorder) {
	sh, ok := r.inj.(*faults.Shielded)
	if !ok || conn.HTTP2 {
		return
	}
	var shard atomic.Uint32
	sh.MeterServer(group, &servertime.Meter{Record: func(d time.Duration) {
		rec.Record(metrics.ServerLatency, int(shard.Add(1)), d)
	}})
}

// startInjector starts embedded Toxiproxy, or connects to the workload's toxiproxy-server and
// checks every fault against it before anything runs.
func (r *runner) startInjector(ctx context.Context) error {
	if r.w.Toxiproxy == "" {
		inj, err := faults.NewEmbedded()
		if err != nil {
			return fmt.Errorf("starting Toxiproxy: %w", err)
		}
		r.inj = faults.Shield(inj) // no client that stops reading holds the fault schedule
		return nil
	}
	ext, err := faults.NewExternal(r.w.Toxiproxy, faults.NewRunPrefix(), "")
	if err != nil {
		return err
	}
	r.inj = faults.Shield(ext)
	r.opts.abandon.add(ext)
	r.tgt.prefix, r.tgt.toxiproxy = ext.Prefix(), r.w.Toxiproxy
	for _, f := range r.w.Faults {
		if f.Action != nil {
			continue // not a toxic: nothing to check on the toxiproxy-server
		}
		t := faults.Toxic{Name: f.Name, Type: f.Toxic, Stream: f.Stream, Attributes: f.Attributes}
		if err := ext.Check(ctx, []faults.Toxic{t}); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return configErr("%s: %w", f.Where, err)
		}
	}
	return nil
}

// negotiate learns which protocol generation the target speaks, on a connection of its own
// (straight to the target, not through a proxy: no fault may decide it).
func (r *runner) negotiate(ctx context.Context, conn wire.Conn) (wire.Negotiated, error) {
	hc, err := wire.NewHTTPClient(conn)
	if err != nil {
		return wire.Negotiated{}, configErr("target: %w", err)
	}
	defer hc.CloseIdleConnections()
	ep := &wire.Endpoint{URL: conn.URL.String(), HTTP: hc, Protocol: r.w.Groups[0].Protocol,
		RequestTimeout: r.w.Groups[0].RequestTimeout, MaxBody: wire.MaxBody, MaxEvent: wire.MaxEvent, ClientName: "mcpchaos"}
	n, err := ep.Negotiate(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		return n, fmt.Errorf("target %s: %w", r.tgt.label, err)
	}
	only := "only "
	if r.w.Groups[0].Protocol == wire.ProtocolStateless && n.Generation == wire.SessionFamily {
		// The workload asks for the stateless revision (protocol: 2026-07-28), which a server
		// may speak beside the session family (the Go SDK's and mcp-go's do).
		if !slices.Contains(n.Supported, wire.ProtocolStateless) {
			return n, fmt.Errorf("target %s: the workload's clients speak %s, which the server does not offer (server/discover named %q); leave protocol out to speak the session family",
				r.tgt.label, wire.ProtocolStateless, n.Supported)
		}
		n.Generation, n.Protocol, only = wire.Stateless, wire.ProtocolStateless, ""
	}
	r.tgt.generation = n.Generation
	r.tgt.other = otherGeneration(n, r.tgt.label, &r.tgt.notes)
	if n.Generation == wire.Stateless {
		r.tgt.notes = append(r.tgt.notes, fmt.Sprintf(
			"the target speaks "+only+"the stateless revision %s: it has no sessions, no GET stream and no resumption, so the session scenarios do not apply (%s are not measured); what applies is measured: requests lost in flight when a fault cuts their response (requests_lost), re-issued with a new id (requests_reissued), the time until a re-issued request got its result (recovery_latency), and tool_call_latency",
			n.Protocol, strings.Join(fleet.SessionOnlyMetrics(), ", ")))
	}
	return n, nil
}

// checkTarget runs the preflight against a target by URL and applies what it learnt: a
// server that keeps no sessions (no ids, or the stateless revision) gets no TTL estimate, and
// a workload that needs sessions stops here; the groups' tools are checked (resolveTools).
// It returns the truth the fleets use.
func (r *runner) checkTarget(ctx context.Context, conn wire.Conn, gen wire.Negotiated, tr truth.Truth) (truth.Truth, error) {
	pf, err := r.preflight(ctx, conn, gen)
	if err != nil {
		return nil, err
	}
	r.tgt.pf = pf
	if gen.Generation == wire.SessionFamily && !pf.sessionIDs {
		r.tgt.noIDs = true
		tr = truth.NewEstimated(0) // nothing to die: no estimate
		r.tgt.notes = append(r.tgt.notes, "the target keeps no sessions: initialize answered without an Mcp-Session-Id (a valid server: ids are optional), so there is no session to die, resume or count; the session figures are not applicable, and what applies is measured: tool calls, their latency, reconnects")
	}
	if pf.substitutes {
		if e, ok := tr.(*truth.Estimated); ok {
			e.Regime.SilentSubstitution = true // set before any fleet starts
		}
		r.tgt.notes = append(r.tgt.notes, "the target answered a ping under a session id it never issued with a result: it serves any id as a live session (silent substitution, inspect's silent_substitution), so a dead session looks alive and its death can only be estimated from the declared TTL; a success after an estimated death proves nothing about the session, and a replayed event cannot be told stale from live, so the figures derived from estimated deaths ("+strings.Join(estimateDerived, ", ")+") are withheld (server serves any id), never shown as measured")
	}
	if r.tgt.noIDs || gen.Generation == wire.Stateless {
		if why := needsSessions(r.w); why != "" {
			kind := "hands out no session ids"
			if gen.Generation == wire.Stateless {
				kind = "speaks the stateless revision " + gen.Protocol
			}
			return nil, fmt.Errorf("the target %s keeps no sessions (it %s), and %s; nothing was run: run a workload without ttl phases against it (what applies is measured: tool calls, requests lost and re-issued, latency)",
				r.tgt.label, kind, why)
		}
	}
	if err := r.resolveTools(pf); err != nil {
		return nil, err
	}
	for _, line := range unknownStatusHints(pf, r.w.Groups) {
		fmt.Fprintln(r.opts.stderr, "mcpchaos: "+line)
		r.tgt.notes = append(r.tgt.notes, line)
	}
	return tr, nil
}

// unknownStatusHints warn, per group, when the server refused a session id it never issued
// with a status the group's dead_statuses do not list: if it answers its dead sessions so too,
// the group's clients cannot tell a dead session from a failure.
func unknownStatusHints(pf *preflight, groups []workloads.GroupSpec) []string {
	st := pf.unknownStatus
	if st == 0 || st/100 == 2 {
		return nil
	}
	var out []string
	for _, g := range groups {
		if !slices.Contains(g.DeadStatuses, st) {
			out = append(out, fmt.Sprintf("group %s: the server answered %d to a session id it never issued, and dead_statuses %v do not list %d: if it answers dead sessions so, this group cannot see them as dead (inspect says which status a dead session gets; --dead-statuses %s)",
				g.Name, st, g.DeadStatuses, st, statusList(append(slices.Clone(g.DeadStatuses), st))))
		}
	}
	return out
}

func statusList(sts []int) string {
	parts := make([]string, len(sts))
	for i, s := range sts {
		parts[i] = strconv.Itoa(s)
	}
	return strings.Join(parts, ",")
}

// describeTarget fills in what the export says about the target.
func (r *runner) describeTarget(run *results.Run) {
	run.Target = r.tgt.label
	run.DetectionDelayEstimated = r.tgt.estimated
	run.Generation = r.tgt.generation.String()
	run.OtherGeneration = r.tgt.other
	if r.tgt.noIDs {
		run.Generation = "session-without-ids"
	}
	run.Notes = append(run.Notes, r.tgt.notes...)
	if r.tgt.prefix != "" {
		run.Notes = append(run.Notes, fmt.Sprintf("proxies were created on the toxiproxy-server %s under the prefix %s and removed at the end; if a run was killed, `mcpchaos faults clean --toxiproxy %s` removes what it left",
			r.tgt.toxiproxy, r.tgt.prefix, r.tgt.toxiproxy))
	}
	for _, f := range r.fleets {
		if li := f.Library(); li != nil {
			if run.Libraries == nil {
				run.Libraries = map[string]results.Library{}
			}
			run.Libraries[f.Name()] = results.Library{Kind: li.Kind, Name: li.Name, Version: li.Version,
				Options: li.Options, NegotiatedProtocol: li.Protocol, ErrorClasses: li.ErrorClasses}
		}
		na := f.NotObservable()
		if r.inst == nil {
			na = append(na, "calls_run_twice") // only the reference server counts executions
			if f.Library() != nil {
				// Only the server's death record tells a library's own ending of a live
				// session from one of a dead session (clients/fleet/declared.go).
				na = append(na, "live_sessions_declared_dead")
			}
		}
		if len(na) > 0 {
			if run.NotObservable == nil {
				run.NotObservable = map[string][]string{}
			}
			run.NotObservable[f.Name()] = na
		}
		if r.tgt.noIDs || r.tgt.generation == wire.Stateless {
			run.Withhold(f.Name(), results.NotApplicable, fleet.SessionOnlyMetrics()...)
		}
		if r.servesAnyID() {
			run.Withhold(f.Name(), results.ServesAnyID, estimateDerived...)
			// Its follow-up request's 200 proves no session alive (clients/fleet/declared.go).
			run.Withhold(f.Name(), results.ServesAnyID, "live_sessions_declared_dead")
		}
		if line := absoluteHint(f.Name(), f.Report().DeathTimes[truth.DeathObserved], r.w.Target); line != "" {
			run.Notes = append(run.Notes, line)
		}
		if n := f.Report().EstimateRefuted; n > 0 {
			run.Withhold(f.Name(), results.EstimateRefuted, estimateDerived...)
		}
	}
}

// servesAnyID says that the preflight found the target serving a session id it never issued
// (mcp-go's default id mode) while the run measures sessions: a dead session's request and a
// live one's get the same answer, and so do their replays (its event store replays by id,
// whoever asks), so no figure computed from a death the run estimated can be told from one
// the tool made up. They are withheld, with this reason, wherever they are shown.
func (r *runner) servesAnyID() bool {
	return r.tgt.pf != nil && r.tgt.pf.substitutes && !r.tgt.noIDs && r.tgt.generation != wire.Stateless
}

// estimateDerived are the figures computed from estimated death times: when the run refutes
// the estimate (successes after an estimated death), they are withheld, not shown as facts.
var estimateDerived = []string{"false_healthy_seconds", "stale_events_applied", "detection_delay", "sessions_dead",
	"dead_session_requests", "retries_against_dead", "misattributed_errors", "retry_amplification", "session_life"}

// callsOn says, for a time since the start, whether the workload's phase then makes calls.
func callsOn(phases []workloads.Phase) func(time.Duration) bool {
	return func(el time.Duration) bool {
		for _, p := range phases {
			if el >= p.Start && el < p.End() {
				return p.Calls
			}
		}
		return false
	}
}

// phaseAt says, for a time since the start, which phase is in force (the last after the end).
func phaseAt(phases []workloads.Phase) func(time.Duration) int {
	return func(el time.Duration) int {
		for i, p := range phases {
			if el < p.End() {
				return i
			}
		}
		return len(phases) - 1
	}
}

// Reference is the reference server a workload's built-in target section asks for: its config
// and its cluster shape (what `mcpchaos serve --from` starts, as a run would).
func Reference(b *workloads.BuiltinTarget) (refserver.Config, refserver.Topology) {
	return configOf(b), topologyOf(b)
}

// configOf turns a workload's built-in target section into the reference server's config.
func configOf(b *workloads.BuiltinTarget) refserver.Config {
	return refserver.Config{
		SessionTTL:          b.SessionTTL,
		Retention:           b.Retention,
		RetentionEvents:     b.RetentionEvents,
		GetValidation:       refserver.GetValidation(b.GetValidation),
		TTLMode:             b.TTLMode,
		Era:                 b.Era,
		DeadStatus:          b.DeadStatus,
		DeadBody:            b.DeadBody,
		UnknownCursorStatus: b.UnknownCursorStatus,
		EvictedCursor:       b.EvictedCursor,
		NotifyInterval:      b.NotifyInterval,
		Keepalive:           b.Keepalive,
		KeepaliveShape:      b.KeepaliveShape,
		Retry:               b.Retry,
		PostResponse:        b.PostResponse,
		MaxSessions:         b.MaxSessions,
		Leak:                b.Leak,
		StreamConflict:      b.StreamConflict,
	}
}

// absoluteHint says, for a target by URL whose TTL is estimated as sliding, that the group
// saw sessions answered dead before the TTL from their last success: a server that ends
// sessions a fixed time after initialize, however active, shows so (as may a restart or a
// DELETE of the server's own). "" when there is nothing to say.
func absoluteHint(group string, observed int64, t workloads.Target) string {
	if observed == 0 || t.URL == "" || t.SessionTTL <= 0 || t.TTLMode == vocab.TTLAbsolute {
		return ""
	}
	return fmt.Sprintf("group %s: %d sessions were answered dead before the declared session_ttl (%s) from their last success had passed: the server may end sessions a fixed time after initialize however active they are (declare ttl_mode: absolute beside session_ttl; inspect --ttl tells), or ended them itself (a restart, its own DELETE)",
		group, observed, t.SessionTTL)
}
