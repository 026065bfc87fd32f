// Package matrix is the client library matrix (`mcpchaos matrix`): its built-in scenario, one
// group per MCP client library under one outage timed against the server's session TTL
// (scenario.yaml says how), the groups whose library cannot run on this machine left out
// (WithoutMissing), and the check that the scenario happened as timed (Held). Running it is
// an ordinary run (package engine); its table is results.WriteMatrix.
package matrix

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/mcpgoworker"
	"github.com/mcpchaos/mcpchaos/clients/tsworker"
	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// scenarioYAML is the matrix's scenario: one group per client library, one fault.
//
//go:embed scenario.yaml
var scenarioYAML []byte

// Scenario is the built-in scenario, read afresh: the caller may change it.
func Scenario() (*workloads.Workload, error) {
	return workloads.Parse("builtin:library-matrix", scenarioYAML)
}

// Outage times the scenario's faults to the target's session TTL: the outage outlasts it by
// 3.5 s, so the sessions die behind it (scenario.yaml says why).
func Outage(w *workloads.Workload, ttl time.Duration) {
	for i := range w.Faults {
		w.Faults[i].For = ttl + 3500*time.Millisecond
	}
}

// Held checks that the built-in scenario happened as timed against the reference
// server, whose deaths are exact: every client met exactly one session death, its first
// session's, in the outage. A client whose session was not up by
// the cut (node workers slow to connect on a starved machine) met none; a session that idled
// out after the outage (a stalled machine) is one more. Either way the table is not the
// libraries' alone, and the run says so with exit status 1.
func Held(e *results.Export) error {
	var off []string
	for _, g := range e.Groups {
		if _, ok := e.Run.Libraries[g.Name]; !ok {
			continue
		}
		if n := g.Counters["sessions_dead"]; n != int64(g.Clients) {
			off = append(off, fmt.Sprintf("%s met %d session deaths for its %d clients", g.Name, n, g.Clients))
		}
	}
	if len(off) == 0 {
		return nil
	}
	return fmt.Errorf("the scenario did not hold (%s): every client must meet one death, its first session's, cut mid-call by the outage; this machine was too slow for the scenario's timing (the export's generator section and phases[].turns say how), so the table shows the machine as much as the libraries; run it again on a quieter machine",
		strings.Join(off, "; "))
}

// WithoutMissing is w without the groups whose client library cannot run here (the
// TypeScript libraries not installed, or no node), with the faults and thresholds that name
// only them, and a line that says which were left out and what to run; the matrix measures
// the rest. A workload left with no group is an error saying the same (a usage error to the
// command line: nothing can run).
func WithoutMissing(w *workloads.Workload) (*workloads.Workload, string, error) {
	var dropped, why []string
	keep := w.Groups[:0:0]
	for _, g := range w.Groups {
		var err error
		if g.Policy == vocab.ClientTSSDK || g.Policy == vocab.ClientTSClient {
			err = tsworker.Check(g.Policy)
		}
		if g.Policy == vocab.ClientMCPGo16 {
			err = mcpgoworker.Check(g.Policy)
		}
		if err == nil {
			keep = append(keep, g)
			continue
		}
		dropped = append(dropped, g.Name)
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // the same cause for every TypeScript group: said once
		}
		if msg := err.Error(); !slices.Contains(why, msg) {
			why = append(why, msg)
		}
	}
	if len(dropped) == 0 {
		return w, "", nil
	}
	note := fmt.Sprintf("not measured: %s (%s)", strings.Join(dropped, ", "), strings.Join(why, "; "))
	if len(keep) == 0 {
		return nil, "", fmt.Errorf("%s; no group is left to measure", note)
	}
	c := *w
	c.Groups = keep
	c.Faults = nil
	for _, f := range w.Faults {
		if len(f.Groups) > 0 && !slices.ContainsFunc(f.Groups, func(n string) bool { return !slices.Contains(dropped, n) }) {
			continue // it named only groups left out
		}
		f.Groups = slices.DeleteFunc(slices.Clone(f.Groups), func(n string) bool { return slices.Contains(dropped, n) })
		c.Faults = append(c.Faults, f)
	}
	c.Thresholds = slices.DeleteFunc(slices.Clone(w.Thresholds), func(t gate.Threshold) bool { return slices.Contains(dropped, t.Scope) })
	return &c, note, nil
}
