package engine

import "fmt"

// lateStartShare is the share of a calls phase's planned turns that may pass before their
// clients' first session is live before the run is incomplete: past it the phase measured too
// few calls to stand for what was planned (on a loaded runner, 2 and 4 of a phase's 80 turns
// made, and the figures that followed were of a few clients, not of the group). A short phase
// of a few clients on a busy runner loses half its turns to a slow start and still measures
// its story (the engine's Example does), so the bar is "far fewer", not "fewer".
const lateStartShare = 0.8

// lateStarts says, a line per group and calls phase, where more than lateStartShare of the
// phase's planned turns came before their client's first session was live (calls_not_made,
// PhaseTurns.NotStarted): the clients started late, so the run did not make the calls it was
// asked to and is incomplete (exit 1, said why). A phase the workload's own faults disturbed
// is left out: there a client that cannot initialize is what was asked for.
func (r *runner) lateStarts() []string {
	dist := disturbed(r.w)
	var out []string
	for i, f := range r.fleets {
		for k, pt := range f.PhaseTurns() {
			if k >= len(r.w.Phases) || !r.w.Phases[k].Calls || k < len(dist) && dist[k] {
				continue
			}
			if line := lateStart(r.w.Groups[i].Name, r.w.Phases[k].Name, pt); line != "" {
				out = append(out, line)
			}
		}
	}
	return out
}

// lateStart is lateStarts' line for one group's phase, "" when the phase made enough turns.
func lateStart(group, phase string, pt phaseTurns) string {
	planned := pt.Turns + pt.NotStarted
	if planned == 0 || float64(pt.NotStarted) <= lateStartShare*float64(planned) {
		return ""
	}
	return fmt.Sprintf("group %s: phase %s: only %d of its %d planned turns had a client with a session; %d came before their client's first session was live (counted in calls_not_made): the clients started late (a busy runner, or a slow initialize), and past %.0f%% of a phase's turns the run is incomplete: its figures are of the few clients that started, not of the group; run again on a quieter machine, with fewer clients, or with a longer ramp",
		group, phase, pt.Turns, planned, pt.NotStarted, 100*lateStartShare)
}
