package results

import (
	"fmt"
	"sort"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// Causes splits a group's transport errors by whose they are (docs/metrics.md, "Whose
// errors"), and counts the calls its generator made late.
type Causes struct {
	// OwnErrors are the transport errors (connect, timeout, reset, other) that are the tool's
	// own: those of its own process's limits (own_limits) and the timeouts recorded while its
	// load generator was starved outside the workload's faults (own_while_starved).
	OwnErrors       int64 `json:"own_errors"`
	OwnLimits       int64 `json:"own_limits"`
	OwnWhileStarved int64 `json:"own_while_starved"`
	// ServerErrors are the other transport errors: the server's, or the network's between.
	ServerErrors int64 `json:"server_errors"`
	// CallsLate are the calls that began more than LateAfter after their turn (turn_lag): the
	// generator could not make them on time, whatever the server did.
	CallsLate int64 `json:"calls_late"`
	// SkippedWhileStarved are the turns skipped behind a call still running (calls_skipped)
	// in the intervals where own_while_starved is counted: calls the generator did not make.
	SkippedWhileStarved int64 `json:"skipped_while_starved"`
}

// LateAfter is how late after its turn a call may begin before it counts as late: 200 times
// the starvation bound's timer lag (generator.Bound), so that a late call is the tool's beyond
// doubt, not a scheduler's hiccup.
const LateAfter = 1_000_000 // µs

// transportKinds are the transport error kinds (the tool's own limits count among any of them).
// Statuses, protocol errors and oversized bodies are what the server sent, starved or not.
var transportKinds = []string{
	metrics.ErrConnect.String(), metrics.ErrTimeout.String(), metrics.ErrReset.String(), metrics.ErrOther.String(),
}

// faultGrace is how long after a fault of the workload ended its errors are still its own:
// clients reconnect after it (engine/measured.go uses the same 2 s).
const faultGrace = 2.0

// Attribute fills every group's Causes (and overall's) from its errors, its own-limit counter,
// the timeline, the faults and the generator's starved windows. A timeout counts as the tool's
// when the timeline recorded it in an interval that overlaps a starved window of the
// generator and no fault of the workload (in force, or ended less than faultGrace before): a
// starved client's deadlines pass while it cannot run, whereas resets and refused connections
// come from the other side, and a fault's errors are what the workload asked for. Call it once
// the export's timeline, faults, generator section and overall are final (a run's end, a merge).
func (e *Export) Attribute() {
	var starved func(t0, t1 float64) bool
	if g := e.Generator; g != nil && len(g.Starving) > 0 {
		starved = func(t0, t1 float64) bool {
			for _, f := range e.Faults {
				end := f.RemovedAtS
				if end == 0 {
					end = t1 + 1 // never removed: in force to the end
				}
				if f.AddedAtS < t1 && end+faultGrace > t0 {
					return false
				}
			}
			for _, w := range g.Starving {
				if w.FromS < t1 && w.ToS > t0 {
					return true
				}
			}
			return false
		}
	}
	var all Causes
	for i := range e.Groups {
		g := &e.Groups[i]
		c := causesOf(g, e.whileStarved(g.Name, starved, timeouts))
		c.SkippedWhileStarved = e.whileStarved(g.Name, starved, skipped)
		g.Causes = &c
		all.OwnLimits += c.OwnLimits
		all.OwnWhileStarved += c.OwnWhileStarved
		all.OwnErrors += c.OwnErrors
		all.ServerErrors += c.ServerErrors
		all.CallsLate += c.CallsLate
		all.SkippedWhileStarved += c.SkippedWhileStarved
	}
	e.Overall.Causes = &all
}

func causesOf(g *Group, whileStarved int64) Causes {
	var transport int64
	for _, k := range transportKinds {
		transport += g.Errors[k]
	}
	c := Causes{OwnLimits: min(g.Counters[metrics.ErrorsOwnLimits.String()], transport)}
	c.OwnWhileStarved = min(whileStarved, transport-c.OwnLimits)
	c.OwnErrors = c.OwnLimits + c.OwnWhileStarved
	c.ServerErrors = transport - c.OwnErrors
	if h, err := g.Histograms[metrics.TurnLag.String()].Decoded(); err == nil && h.TotalCount() > 0 {
		for _, b := range h.Distribution() { // buckets of 3 significant digits: a value past LateAfter by 0.1%
			if b.From > LateAfter {
				c.CallsLate += b.Count
			}
		}
	}
	return c
}

// timeouts and skipped read a running total off a timeline sample.
func timeouts(s GroupSample) int64 { return s.Errors[metrics.ErrTimeout.String()] }
func skipped(s GroupSample) int64  { return s.Counters[metrics.CallsSkipped.String()] }

// whileStarved is how much of a running total (total) the group's timeline grew in intervals
// that starved says are the generator's (its samples hold running totals).
func (e *Export) whileStarved(group string, starved func(t0, t1 float64) bool, total func(GroupSample) int64) int64 {
	if starved == nil || e.Timeline == nil {
		return 0
	}
	ss := append([]Sample(nil), e.Timeline.Samples...)
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].TS < ss[j].TS })
	var n, prev int64
	prevT := 0.0
	for _, s := range ss {
		now := total(s.Groups[group])
		if now > prev && starved(prevT, s.TS) {
			n += now - prev
		}
		prev, prevT = max(prev, now), s.TS
	}
	return n
}

// OwnErrorsWhy says why a run whose transport errors are mostly the tool's own is incomplete
// ("" when it is not): more than half of them, and more than 1% of what the clients tried
// (sessions started and tool calls) and at least 10, so that a few timeouts in a starved
// second of a long run leave it complete (they are still counted).
func (e *Export) OwnErrorsWhy() string {
	c := e.Overall.Causes
	if c == nil {
		return ""
	}
	tried := e.Overall.Counters[metrics.SessionsStarted.String()] + e.Overall.Counters[metrics.ToolCallsOK.String()] + e.Overall.Counters[metrics.ToolCallsFailed.String()]
	if c.OwnErrors <= c.ServerErrors || c.OwnErrors < 10 || c.OwnErrors*100 <= tried {
		return ""
	}
	return fmt.Sprintf("%d of its %d transport errors are the tool's own (%d while its load generator was starved, %d its own process's limits: descriptors, ports), so it did not measure the server",
		c.OwnErrors, c.OwnErrors+c.ServerErrors, c.OwnWhileStarved, c.OwnLimits)
}

// LateWhy says when the generator could not keep the workload's schedule ("" when it could):
// of the turns, more than 1% (and at least 10) began over LateAfter late or were skipped while
// it was starved, so the server was not given the load the workload asked for.
func (e *Export) LateWhy() string {
	c := e.Overall.Causes
	if c == nil {
		return ""
	}
	turns := e.Overall.Histograms[metrics.TurnLag.String()].Count + e.Overall.Counters[metrics.CallsSkipped.String()]
	missed := c.CallsLate + c.SkippedWhileStarved
	if missed < 10 || missed*100 <= turns {
		return ""
	}
	return fmt.Sprintf("%d of its %d turns were not made on time (%d calls began over %s late, %d turns skipped while it was starved): the server was not given the load the workload asked for",
		missed, turns, c.CallsLate, time.Duration(LateAfter)*time.Microsecond, c.SkippedWhileStarved)
}
