package fleet

import (
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Outcome is what one group measured, as Problems reads it.
type Outcome struct {
	Name      string
	Snapshot  *metrics.Snapshot
	Report    Report
	Stateless bool // the target spoke the stateless revision: no sessions, no replays
	// Conduct is what the server did that the clients coped with, in words (wire.Conduct).
	Conduct []wire.Line
}

// Outcome returns the group's outcome now (at the end of the run).
func (f *Fleet) Outcome() Outcome {
	return Outcome{Name: f.cfg.Name, Snapshot: f.rec.Snapshot(), Report: f.Report(), Stateless: f.ep.Generation == wire.Stateless,
		Conduct: f.ep.Conduct().Lines()}
}

// Problems says, one line per reason, where a run could not measure what it was asked to, so
// that it does not pass: most tool calls failed for reasons other than session death (wrong
// arguments, a server without tools, a broken server), the workload's faults should have produced replays and none came, or the target serves dead
// session ids as alive. expectReplays says that the workload cuts streams while sessions are
// held (faults that drop connections) and makes calls after. It is a pure function of the
// groups' outcomes.
func Problems(groups []Outcome, expectReplays bool) []string {
	var out []string
	var replays, reconnects int64
	for _, g := range groups {
		out = append(out, g.problems(expectReplays)...)
		if g.Stateless {
			continue
		}
		s := g.Snapshot
		replays += s.Counter(metrics.ReplaysOK) + s.Counter(metrics.ReplaysDead) + s.Counter(metrics.ReplaysUnknownCursor)
		if h := s.Hist(metrics.ReconnectLatency); h != nil {
			reconnects += h.TotalCount()
		}
	}
	// One group may end its sessions before it replays (its calls fail first), and a short
	// run may end before anyone reconnects; the run failed to test the replay only when clients
	// did reconnect after drops, and never with a cursor.
	if expectReplays && reconnects > 0 && replays == 0 {
		out = append(out, fmt.Sprintf("%d reconnects after drops but no replay in any group: no stream carried an event id, so no client held a cursor; have the server stream its replies (progress tokens, notifications) or give its event ids", reconnects))
	}
	return out
}

func (g Outcome) problems(faultsCut bool) []string {
	c := func(m metrics.Counter) int64 { return g.Snapshot.Counter(m) }
	var out []string
	say := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("group %s: ", g.Name)+fmt.Sprintf(format, args...))
	}
	why := ""
	if len(g.Report.ErrorSamples) > 0 {
		why = fmt.Sprintf(" (first: %s)", g.Report.ErrorSamples[0])
	}
	// What the server did that no fault does, first: it is the cause of what follows. A
	// connection reset inside an event is the server's only where no fault cut streams; a
	// request without a response mid-run may be a fault's or a busy machine's (the preflight,
	// straight to the server, names those). A server may offer no GET stream (405): that
	// stops a run only when its faults cut streams, to measure drops and replays (else a note).
	sized := false
	for _, l := range g.Conduct {
		// 409s to reconnects are counted (reconnects_refused, refusals.go): a stream the server
		// still held, which a drop or a half-open stream makes, is a figure, not a failure.
		if l.Behaviour == wire.NoResponse || l.Behaviour == wire.SlowHeaders || faultsCut && l.Behaviour.FaultCanMake() ||
			l.Behaviour == wire.GetRefused && !faultsCut || l.Behaviour == wire.GetConflict && c(metrics.ReconnectsRefused) > 0 {
			continue
		}
		say("%s", l.Text)
		sized = sized || l.Behaviour == wire.HugeEvent || l.Behaviour == wire.GzipBody
	}
	// Calls cut by the workload's faults (resets, refused connections, timeouts) are what was
	// asked for; calls the server refused (a JSON-RPC error, a status that is not a dead
	// session's, a broken reply) or answered with isError are not.
	calls := c(metrics.ToolCallsOK) + c(metrics.ToolCallsFailed) + c(metrics.ToolErrors)
	refused := g.Report.RefusedCalls + c(metrics.ToolErrors)
	for _, m := range misbehaviours {
		if n := g.Snapshot.Errors[m.kind]; n > 0 && !(sized && m.kind == metrics.ErrTooLarge) && !(m.kind == metrics.ErrProtocol && g.protocolFinding(calls, refused)) {
			say("the server %s %d times%s", m.did, n, g.sampleOf(m.kind))
		}
	}
	switch {
	case g.Report.CallsSent == 0 && g.Report.CallsDue > 0:
		skipped := c(metrics.CallsSkipped)
		say("no tool call was made, though %d were due (%d skipped while a previous call was still running, the rest could not be sent): the run measured no call%s",
			g.Report.CallsDue, skipped, whyOr(why, " (no error was recorded: were the group's sessions ever started?)"))
	case calls > 0 && 2*refused > calls:
		say("%d of %d tool calls were refused by the server (%d tool errors, the rest JSON-RPC errors, bad statuses or broken replies), not failed by a session death or a fault, so the run measured the refusals, not the sessions%s",
			refused, calls, c(metrics.ToolErrors), why)
	}
	for _, p := range g.Report.LibraryProblems {
		say("%s", p)
	}
	if n := g.Report.ServedAfterDeath; n > 0 {
		say("the target answered %d requests with success for sessions it had answered as dead: it serves dead ids as alive (silent substitution), so a dead session can look alive", n)
	}
	if n := g.Report.SessionIDChanged; n > 0 {
		say("the target answered %d requests under a session id other than the one sent: it substitutes sessions silently, so a dead session can look alive", n)
	}
	return out
}

// ProblemsOf is Problems over a run's fleets at its end.
func ProblemsOf(fleets []*Fleet, expectReplays bool) []string {
	out := make([]Outcome, len(fleets))
	for i, f := range fleets {
		out[i] = f.Outcome()
	}
	return Problems(out, expectReplays)
}

// Notes are the lines a run's export and summary carry about its groups beyond their
// counters: the server requests answered by method, how the death times were obtained, and
// the first error texts.
func Notes(fleets []*Fleet) []string {
	var out []string
	for _, f := range fleets {
		r := f.Report()
		if len(r.ServerRequests) > 0 {
			out = append(out, fmt.Sprintf("group %s: server requests answered: %s", f.cfg.Name, countsText(r.ServerRequests, wire.ServerMethods())))
		}
		if r.EstimateRefuted > 0 {
			out = append(out, fmt.Sprintf("group %s: the server answered %d POST requests with success after the estimated death of their session (GET answers are no evidence: a permissive GET serves dead sessions): its sessions live longer than the declared session_ttl says (or an open stream keeps them alive), unless it serves any id as alive (silent substitution, noted when seen); every figure derived from the estimate is withheld", f.cfg.Name, r.EstimateRefuted))
		}
		if len(r.DeathTimes) > 0 {
			out = append(out, fmt.Sprintf("group %s: session death times: %s", f.cfg.Name, countsText(r.DeathTimes, []string{truth.DeathExact, truth.DeathFromTTL, truth.DeathObserved})))
		}
		for _, e := range r.ErrorSamples {
			out = append(out, fmt.Sprintf("group %s: error: %s", f.cfg.Name, e))
		}
		for _, l := range f.ep.Conduct().Lines() {
			if l.Behaviour == wire.GetRefused {
				out = append(out, fmt.Sprintf("group %s: %s", f.cfg.Name, l.Text))
			}
		}
	}
	return out
}

func countsText(m map[string]int64, order []string) string {
	s := ""
	for _, k := range order {
		if n, ok := m[k]; ok {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%s %d", k, n)
		}
	}
	return s
}

func whyOr(why, otherwise string) string {
	if why != "" {
		return why
	}
	return otherwise
}

// misbehaviours are the error kinds only a server's own doing causes (a fault resets, refuses
// or stalls; it never writes), in words for a problem line.
var misbehaviours = []struct {
	kind metrics.ErrorKind
	did  string
}{
	{metrics.ErrTooLarge, "sent more than mcpchaos reads (a body, event, line or header block over its cap)"},
	{metrics.ErrProtocol, "broke the protocol (a reply that is not JSON-RPC or SSE, a wrong id or content type)"},
	{metrics.ErrRedirect, "redirected off its origin, or in a loop"},
	{metrics.ErrBadSessionID, "gave a session id that is not visible ASCII or too long"},
}

// sampleOf is the first error text of the group that is of kind k, as " (first: ...)".
func (g Outcome) sampleOf(k metrics.ErrorKind) string {
	for _, s := range g.Report.ErrorSamples {
		if sampleKind(s) == k {
			return fmt.Sprintf(" (first: %s)", s)
		}
	}
	return ""
}

// sampleKind guesses an error text's kind from the words its error type writes.
func sampleKind(s string) metrics.ErrorKind {
	switch {
	case strings.Contains(s, "larger than its cap"), strings.Contains(s, "response headers exceeded"):
		return metrics.ErrTooLarge
	case strings.HasPrefix(s, "protocol: "):
		return metrics.ErrProtocol
	case strings.Contains(s, "redirect"):
		return metrics.ErrRedirect
	case strings.HasPrefix(s, "bad session id"):
		return metrics.ErrBadSessionID
	}
	return metrics.ErrOther
}
