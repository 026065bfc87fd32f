package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// A run that measured nothing must never pass: a group whose calls phases ended without one
// successful tool call measured no session, no death and no latency, whatever else its
// counters say. The problem names what the server sent instead (the group's first error
// text: a wrong Content-Type, a body that is not JSON or not JSON-RPC, a refused status), so
// the reader can tell a broken server from a broken workload.

// measuredNothing says, a line per group, which groups made calls phases pass without a
// successful tool call; groups already named in problems are left to those lines.
func (r *runner) measuredNothing(problems []string) []string {
	if !slices.ContainsFunc(r.w.Phases, func(p workloads.Phase) bool { return p.Calls }) {
		return nil
	}
	var out []string
	for i, rec := range r.recs {
		name := r.w.Groups[i].Name
		if r.w.Groups[i].Clients == 0 || rec.Get(metrics.ToolCallsOK) > 0 {
			continue
		}
		if slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, "group "+name+":") }) {
			continue
		}
		if len(r.w.Faults) > 0 && !serverSpoke(rec) {
			// Only connections refused, reset or timed out, in a workload that cuts them: on a
			// starved machine a short calls phase can pass inside its own outage.
			continue
		}
		out = append(out, fmt.Sprintf("group %s: no tool call succeeded in the calls phases, so the run measured nothing (%s)", name, r.whatWasSent(i, rec)))
	}
	return out
}

// serverSpoke says whether some of a group's failures were the server's answers (a status, a
// broken reply, something over a cap, a JSON-RPC error), not only lost connections.
func serverSpoke(rec *metrics.Recorder) bool {
	for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
		if k != metrics.ErrConnect && k != metrics.ErrTimeout && k != metrics.ErrReset && rec.Errors(k) > 0 {
			return true
		}
	}
	return false
}

// whatWasSent says what group i got instead of results: its errors by kind and the first of
// its error texts.
func (r *runner) whatWasSent(i int, rec *metrics.Recorder) string {
	var parts []string
	for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
		if n := rec.Errors(k); n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	got := "no answer at all"
	if len(parts) > 0 {
		got = "errors: " + strings.Join(parts, ", ")
	}
	if n := rec.Get(metrics.ToolCallsFailed); n > 0 {
		got = fmt.Sprintf("%d calls failed; %s", n, got)
	}
	if i < len(r.fleets) {
		if s := r.fleets[i].Report().ErrorSamples; len(s) > 0 {
			got += "; the server sent: " + s[0]
		}
	}
	return got
}

// explainProblems adds to the fleets' problem lines what the preflight learnt: the no-cursor
// line names the tools the server offers that say they stream.
func (r *runner) explainProblems(ps []string) []string {
	pf := r.tgt.pf
	if pf == nil {
		return ps
	}
	for i, p := range ps {
		if strings.Contains(p, "no client held a cursor") {
			if st := pf.streamingTools(); len(st) > 0 {
				ps[i] = p + fmt.Sprintf("; the server offers tools that say they stream or report progress: %s (choose one with --tool)", strings.Join(st, ", "))
			} else {
				ps[i] = p + fmt.Sprintf("; none of the tools the server offers (%s) says it streams", pf.names())
			}
		}
	}
	return ps
}

// countRunTwice takes from the reference server the tool calls it ran more than once, by
// group (the clients name each logical call): a fact no client can see. A server by URL does
// not say: there the counter is listed as not observable (describeTarget).
func (r *runner) countRunTwice() {
	if r.inst == nil {
		return
	}
	rt := r.inst.RunTwice()
	for i, rec := range r.recs {
		rec.Add(metrics.CallsRunTwice, rt.ByGroup[r.w.Groups[i].Name])
	}
	if rt.Partial {
		r.tgt.notes = append(r.tgt.notes, "the reference server stopped learning new tool calls after its limit: calls_run_twice counts only calls it had learnt")
	}
}

// phaseTurns is what a group's request loops did in one phase: the turns its schedule gave
// them, and those that passed with no live session to call on (calls_not_made).
type phaseTurns = fleet.PhaseTurns

// shortfalls is the function below over the run's fleets, a group at a time. The status the
// preflight's made-up session id got is a group's likely cause only when the server answered
// that status to the group's own session-scoped requests during the run: a server that
// answers 400 to an id it never issued, yet never to a session of the run (the everything
// server, whose sessions never die), did not make the group miss its calls.
// Shortfalls inside the workload's own faults that are not problems are said in a note.
func (r *runner) shortfalls() []string {
	dist := disturbed(r.w)
	var out []string
	for i, f := range r.fleets {
		pf := r.tgt.pf
		if pf != nil && pf.unknownStatus != 0 && f.RefusedWith(pf.unknownStatus) == 0 {
			unseen := *pf
			unseen.unknownStatus = 0
			pf = &unseen
		}
		var first []string
		if s := f.Report().ErrorSamples; len(s) > 0 {
			first = s[:1]
		}
		by := [][]phaseTurns{f.PhaseTurns()}
		lines := shortfalls(r.w.Groups[i:i+1], r.w.Phases, dist, by, pf, first)
		if len(lines) == 0 {
			r.tgt.notes = append(r.tgt.notes, outageNotes(r.w, r.w.Groups[i].Name, by[0], dist)...)
		}
		out = append(out, lines...)
	}
	return out
}

// outageNotes says, per calls phase the workload's own faults disturbed, that a group missed
// most of its turns there (calls_not_made) and which faults were in force: the reader of
// calls_not_made learns that the target was cut as the workload asked, not that sessions were
// lost. (A phase that waits for the TTL lasts only its offset under session_ttl: none, so a
// fault timed for the TTL can reach into the next calls phase.)
func outageNotes(w *workloads.Workload, group string, by []phaseTurns, dist []bool) []string {
	var out []string
	for k, p := range w.Phases {
		if !p.Calls || k >= len(by) || k >= len(dist) || !dist[k] || 2*by[k].NotMade <= by[k].Turns {
			continue
		}
		var in []string
		for _, f := range w.Faults {
			if end := faultEnd(w, f); f.At < p.End() && end+recoveryRoom > p.Start {
				in = append(in, fmt.Sprintf("%s (%s to %s)", f.Name, f.At, end))
			}
		}
		out = append(out, fmt.Sprintf("group %s: phase %s (%s to %s): %d of its %d turns passed with no live session (calls_not_made) while the workload's own faults cut the target or had just ended: %s; what was asked for, not sessions the server lost",
			group, p.Name, p.Start, p.End(), by[k].NotMade, by[k].Turns, strings.Join(in, ", ")))
	}
	return out
}

// recoveryRoom is how long after a fault of the workload clients may take to come back
// (reconnect backoff up to a second, a probe, a re-initialize) on a loaded machine: calls
// phases that begin within it count as disturbed.
const recoveryRoom = 2 * time.Second

// disturbed says, per phase, whether one of the workload's own faults or actions was in force
// during it or ended less than recoveryRoom before it (an action counts to the end of the run:
// a restart's effects outlast the command). Calls missed while the workload cuts the target
// are what it asked for, and how long clients take to come back depends on the machine.
func disturbed(w *workloads.Workload) []bool {
	out := make([]bool, len(w.Phases))
	for k, p := range w.Phases {
		for _, f := range w.Faults {
			if f.At < p.End() && faultEnd(w, f)+recoveryRoom > p.Start {
				out[k] = true
			}
		}
	}
	return out
}

// faultEnd is when a fault of the workload stops being in force: at the end of its for, or at
// the end of the run (an action, or a fault without for).
func faultEnd(w *workloads.Workload, f workloads.Fault) time.Duration {
	if f.For > 0 && f.Action == nil {
		return f.At + f.For
	}
	return w.Duration
}

// shortfalls says, a line per group and calls phase, where a group made fewer than half of the
// phase's calls for want of a live session, or stayed reconnecting through it: the run did not
// measure the calls it was asked to, and the likely cause is named (a dead-session status the
// group does not know, from the preflight; else the group's first error). byPhase[i][k] is
// group i's count in phase k. In a phase disturbed by the workload's own faults (disturbed[k])
// missed calls are what was asked for, and how soon clients come back is the machine's: there
// only a shortfall with a known cause, or a group that stayed reconnecting through a phase of
// at least recoveryRoom, is a problem.
func shortfalls(groups []workloads.GroupSpec, phases []workloads.Phase, disturbed []bool, byPhase [][]phaseTurns, pf *preflight, firstError []string) []string {
	var out []string
	for i, g := range groups {
		for k, p := range phases {
			if !p.Calls || i >= len(byPhase) || k >= len(byPhase[i]) {
				continue
			}
			pt := byPhase[i][k]
			// Turns missed behind calls still running are the machine's as much as the server's
			// (a stalled generator skips turns too); they count only when the cause is known: the
			// server answers a status the group cannot classify, so its calls fail and retry.
			missing, known := pt.NotMade, mismatch(g, pf)
			if known {
				missing += pt.Skipped
			}
			if pt.Turns == 0 || 2*missing <= pt.Turns {
				continue
			}
			if k < len(disturbed) && disturbed[k] && !known && (pt.NotMade < pt.Turns || p.Duration < recoveryRoom) {
				continue
			}
			what := fmt.Sprintf("%d of its %d turns passed with no live session to call on (calls_not_made)", pt.NotMade, pt.Turns)
			switch {
			case pt.NotMade == pt.Turns:
				what = fmt.Sprintf("it stayed reconnecting through the phase: none of its %d turns had a live session to call on (calls_not_made)", pt.Turns)
			case known && pt.Skipped > 0:
				what = fmt.Sprintf("%d of its %d turns made no call (%d with no live session to call on, calls_not_made; %d behind calls that kept failing, calls_skipped)", missing, pt.Turns, pt.NotMade, pt.Skipped)
			}
			out = append(out, fmt.Sprintf("group %s: phase %s: %s, so the run did not measure the calls it was asked to; %s", g.Name, p.Name, what, shortfallCause(g, pf, firstError, i)))
		}
	}
	return out
}

// mismatch says that the server refused a session id it never issued with a status the
// group's dead_statuses do not list (the preflight): the group cannot see its dead sessions.
func mismatch(g workloads.GroupSpec, pf *preflight) bool {
	return pf != nil && pf.unknownStatus != 0 && pf.unknownStatus/100 != 2 && !slices.Contains(g.DeadStatuses, pf.unknownStatus)
}

func shortfallCause(g workloads.GroupSpec, pf *preflight, firstError []string, i int) string {
	if mismatch(g, pf) {
		st := pf.unknownStatus
		return fmt.Sprintf("likely cause: the server answered %d to dead sessions (a session id it never issued got %d), which dead_statuses %v do not list, so the clients could not tell a dead session from a failure; inspect advises dead_statuses [%d] for such a server (--dead-statuses %s)",
			st, st, g.DeadStatuses, st, statusList(append(slices.Clone(g.DeadStatuses), st)))
	}
	if i < len(firstError) && firstError[i] != "" {
		return "its clients were reconnecting or re-initializing; the first error: " + firstError[i]
	}
	return "its clients were reconnecting or re-initializing"
}

// unmeasurableDeaths says that a workload which waits for the session TTL (to see
// what clients make of dead sessions and their replays) met a target that serves any id: the
// story it asked for cannot be measured there, whatever the counters say, so the run does not
// pass. The same target decides it every time: identical runs exit alike.
func (r *runner) unmeasurableDeaths() []string {
	if !r.servesAnyID() || needsSessions(r.w) == "" {
		return nil
	}
	return []string{fmt.Sprintf("the target serves any session id as live (a ping under an id it never issued got a result: silent substitution), so a dead session's requests and replays are answered as a live one's and no stale event can be told from a live one; %s, and the figures derived from deaths (%s) are withheld (server serves any id) in every group; what applies is measured (tool calls, drops, replays answered, their latency): run a workload without ttl phases against it, or give the server a session id manager that refuses unknown ids (mcp-go: WithStateful(true))",
		needsSessions(r.w), strings.Join(estimateDerived, ", "))}
}
