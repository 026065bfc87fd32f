package fleet

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// A finding is what a server did wrong that the run measured around: counted, named and
// said, but no reason for the run to fail by itself. A server whose event store replays a
// stored priming event as `data: {}` (the TypeScript SDK's) breaks the protocol on a replay
// now and then, as timing has it; were that a problem, two identical runs would exit 0 and 1.
// The workload makes a finding fail the gate with a threshold on its counter
// (GROUP.errors.protocol == 0), the same way every time.

// protocolFinding says that the group's protocol violations are a finding, not a problem:
// its tool calls were made and mostly answered, so the run measured what it was asked despite
// them. Where they broke the calls themselves (no call made or answered, or at least half
// refused, broken replies among them), they are the cause of a run that measured nothing, a
// problem line (Problems).
func (g Outcome) protocolFinding(calls, refused int64) bool {
	if g.Report.CallsSent == 0 && g.Report.CallsDue > 0 || calls == 0 {
		return false
	}
	return 2*refused <= calls && g.Snapshot.Counter(metrics.ToolCallsOK) > 0
}

// Findings says, one line per group, what the server did wrong that the run counted without
// failing on it: protocol violations (errors.protocol) that did not stop its calls.
func Findings(groups []Outcome) []string {
	var out []string
	for _, g := range groups {
		n := g.Snapshot.Errors[metrics.ErrProtocol]
		if n == 0 {
			continue
		}
		c := g.Snapshot.Counter
		calls := c(metrics.ToolCallsOK) + c(metrics.ToolCallsFailed) + c(metrics.ToolErrors)
		if !g.protocolFinding(calls, g.Report.RefusedCalls+c(metrics.ToolErrors)) {
			continue // a problem line says it (Problems)
		}
		out = append(out, fmt.Sprintf("group %s: protocol_violation: the server broke the protocol %d times%s; counted in errors.protocol, not a failed run by itself (its calls were answered); the threshold %s.errors.protocol == 0 makes it fail the gate",
			g.Name, n, g.sampleOf(metrics.ErrProtocol), g.Name))
	}
	return out
}

// FindingsOf is Findings over a run's fleets at its end.
func FindingsOf(fleets []*Fleet) []string {
	out := make([]Outcome, len(fleets))
	for i, f := range fleets {
		out[i] = f.Outcome()
	}
	return Findings(out)
}
