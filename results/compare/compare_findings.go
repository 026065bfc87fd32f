package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/results"
)

// What a hazard's regression means, in words a release manager reads without the metric ids.
var hazardWords = map[string]string{
	"misattributed_errors":        "blames tools for session deaths",
	"live_sessions_declared_dead": "abandons live sessions as dead",
	"stale_events_applied":        "applies replayed events of dead sessions",
	"reinit_collisions":           "sends requests with old session ids after re-initializing",
	"retries_against_dead":        "retries against dead sessions",
	"dead_session_requests":       "sends more requests to dead sessions",
	"tool_calls_failed":           "fails more tool calls",
	"false_healthy_seconds":       "believes dead sessions alive for longer",
	"retry_amplification":         "piles more retries onto each dead session",
}

// findings says in words what changed in the server's sessions, one line per group with a
// regressed hazard: what its clients now do, and the change of the server that explains it
// where the counters tell (replays answered 200 where they answered dead; requests on dead
// sessions answered; a probe group that no longer probes).
func findings(c *Comparison) []string {
	out := probeFindings(c) // steady_compare.go
	for _, r := range c.Rows {
		if r.Metric == "sessions_served_past_death" && r.Verdict == VerdictRegressed {
			out = append(out, fmt.Sprintf("requests on dead sessions now succeed (the server answers session ids past their declared TTL with 200: it no longer expires them, or serves dead ids as alive): group %s's session figures are withheld, the estimate of their deaths refuted", r.Group))
		}
	}
	for _, r := range c.Rows {
		if r.Metric == lifeMetric && r.Verdict == VerdictRegressed {
			out = append(out, r.Note) // compare_life.go: the server's TTL moved
		}
	}
	for _, g := range groupsOf(c) {
		var appeared, lost []string
		staleAppeared := false // a dead session's replay answered 200 with events: the GET lied
		for _, r := range c.Rows {
			if r.Group != g || r.Verdict != VerdictRegressed || r.Class != gate.ClassHazard || r.Metric == "sessions_served_past_death" {
				continue
			}
			w := fmt.Sprintf("%s (%s %s → %s)", hazardWords[r.Metric], r.Metric, gate.FormatValue(r.Unit, *r.Base), gate.FormatValue(r.Unit, *r.Current))
			if strings.Contains(r.Note, "no longer shows") {
				lost = append(lost, r.Metric)
			} else {
				appeared = append(appeared, w)
				staleAppeared = staleAppeared || r.Metric == "stale_events_applied" && *r.Base == 0
			}
		}
		control := strings.Contains(noteOf(c, g, "misattributed_errors"), "control group")
		if q := find(c, g, "events_quarantined"); q != nil && q.Verdict == VerdictRegressed {
			out = append(out, fmt.Sprintf("replays of dead sessions now answer 200 (the server's GET no longer validates the session): group %s's probes caught it (events_quarantined %s → %s)",
				g, gate.FormatValue(q.Unit, *q.Base), gate.FormatValue(q.Unit, *q.Current)))
		}
		switch {
		case len(appeared) > 0 && (moved(c, g, "replays_ok", +1) && moved(c, g, "replays_dead", -1) || staleAppeared && value(c, g, "probes_sent") > 0) ||
			staleAppeared && control:
			// Stale events are replayed events of sessions already dead: a GET answered 200
			// for a dead session, however the replay counts moved on a loaded runner. (A
			// probe group that stopped probing is said below instead.)
			out = append(out, fmt.Sprintf("replays of dead sessions now answer 200 (the server's GET no longer validates the session): group %s now %s", g, strings.Join(appeared, "; ")))
		case len(appeared) > 0 && moved(c, g, "probes_sent", -1) && value(c, g, "probes_sent") == 0:
			out = append(out, fmt.Sprintf("group %s no longer probes after a replay (its probe policy is off): it now %s", g, strings.Join(appeared, "; ")))
		case len(appeared) > 0:
			out = append(out, fmt.Sprintf("group %s now %s", g, strings.Join(appeared, "; ")))
		}
		if d := find(c, g, "sessions_dead"); d != nil && d.Verdict == VerdictRegressed {
			out = append(out, fmt.Sprintf("sessions now die more often (the server's expiry, not the runner: a session's death is the server's clock): group %s lost %s sessions (was %s)", g,
				gate.FormatValue(d.Unit, *d.Current), baseText(d)))
		}
		if len(lost) > 0 && control && moved(c, g, "sessions_dead", -1) {
			out = append(out, fmt.Sprintf("requests on dead sessions now succeed (the server answers expired session ids with 200, or the fault was not injected): control group %s no longer runs into dead sessions (%s)", g, strings.Join(lost, ", ")))
		} else if len(lost) > 0 {
			out = append(out, fmt.Sprintf("control group %s no longer shows the fault it is there to show (%s): was the fault injected?", g, strings.Join(lost, ", ")))
		}
	}
	return out
}

func groupsOf(c *Comparison) []string {
	var gs []string
	seen := map[string]bool{"overall": true, "threshold": true, "steady_state": true}
	for _, r := range c.Rows {
		if !seen[r.Group] {
			seen[r.Group] = true
			gs = append(gs, r.Group)
		}
	}
	return gs
}

func find(c *Comparison, group, metric string) *Row {
	for i := range c.Rows {
		if c.Rows[i].Group == group && c.Rows[i].Metric == metric {
			return &c.Rows[i]
		}
	}
	return nil
}

func noteOf(c *Comparison, group, metric string) string {
	if r := find(c, group, metric); r != nil {
		return r.Note + " " + r.Tolerance
	}
	return ""
}

func value(c *Comparison, group, metric string) float64 {
	if r := find(c, group, metric); r != nil && r.Current != nil {
		return *r.Current
	}
	return -1
}

// moved reports whether a counter went the way dir says (+1 up, -1 down) past every baseline.
func moved(c *Comparison, group, metric string, dir int) bool {
	r := find(c, group, metric)
	if r == nil || r.Base == nil || r.Current == nil {
		return false
	}
	lo, hi := *r.Base, *r.Base
	if r.BaseMin != nil {
		lo, hi = *r.BaseMin, *r.BaseMax
	}
	if dir > 0 {
		return *r.Current > hi
	}
	return *r.Current < lo
}

// compareRefuted judges, per group, the estimate of session deaths for its refutation: a group
// whose current run saw its sessions answer after their estimated death (the declared TTL from
// the last success) where no baseline's did now meets a server that answers dead or expired
// session ids with 200 (it no longer expires sessions at the TTL, or serves dead ids as
// alive). The figures derived from the estimate are withheld and never judged, so without
// this row that session regression would pass as "nothing judged changed". It is not timed:
// a stalled runner sends its requests later, never to a session the server had closed.
func (c *Comparison) compareRefuted(bases []results.Part, cur *results.Export) {
	refuted := func(e *results.Export, g string) bool {
		for _, why := range e.Run.Withheld[g] {
			if why == results.EstimateRefuted {
				return true
			}
		}
		return false
	}
	for _, g := range groupNames(cur) {
		if g == "overall" || !refuted(cur, g) || slices.ContainsFunc(bases, func(b results.Part) bool { return refuted(b.Export, g) }) {
			continue
		}
		zero, one := 0.0, 1.0
		r := Row{Group: g, Metric: "sessions_served_past_death", Unit: gate.UnitCount, Class: gate.ClassHazard,
			Base: &zero, Current: &one, Verdict: VerdictRegressed, Tolerance: "no baseline's sessions answered after their estimated death",
			Note: "sessions answered after their estimated death (TTL from the last success): the estimate is refuted and its figures withheld"}
		c.count(r)
		c.Rows = append(c.Rows, r)
	}
}

// baseText is a row's baseline value in words: the value, or its range over the baselines.
func baseText(r *Row) string {
	if r.BaseMin != nil && r.BaseMax != nil && *r.BaseMin != *r.BaseMax {
		return gate.FormatValue(r.Unit, *r.BaseMin) + " to " + gate.FormatValue(r.Unit, *r.BaseMax)
	}
	return gate.FormatValue(r.Unit, *r.Base)
}
