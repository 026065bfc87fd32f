package compare

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/results"
)

// How compare judges one number (docs/gate.md): by the metric's class (gate.Class) first: a
// load figure is the runner's and never judged; a control group is judged only on its hazard
// outcomes, for their presence; the overall sums are judged per group; then hazards and work
// counts against the baselines' spread, latencies against the baselines' run-to-run spread of
// the statistic (compare_hist.go).

// judgeCtx is what a row's judgement needs beyond its own values.
type judgeCtx struct {
	group   string
	control string // the policy of a control group, "" otherwise
	starved string // why the runs' timing cannot be judged (a starved runner), "" if it can
	// lagGrowth is how much the generator's own timer lag (p99, µs) grew from the worst
	// baseline to the current run; 0 when it did not grow or a run does not say.
	lagGrowth float64
	bgs       []*results.Group
	cg        *results.Group
}

// judgeMetric fills a row for one metric of one group: the values, and the verdict.
func judgeMetric(m gate.Metric, t gate.Tolerance, x judgeCtx) Row {
	row := Row{Group: x.group, Metric: m.Name, Unit: m.Unit(), Class: m.Class(), Tolerance: t.Describe(m.Unit())}
	var bvals []float64
	for _, g := range x.bgs {
		if v, ok := results.Value(m, g); ok {
			bvals = append(bvals, v)
		}
	}
	if len(bvals) > 0 {
		med, lo, hi := spread(bvals)
		row.Base = &med
		if len(bvals) > 1 {
			row.BaseMin, row.BaseMax = &lo, &hi
		}
	}
	if x.cg != nil {
		if v, ok := results.Value(m, x.cg); ok {
			row.Current = &v
		}
	}
	if m.Key() == gate.SessionLifeHist && x.group != "overall" {
		judgeSessionLife(&row, m, bvals, x) // compare_life.go: the server's clock, at any load
		return row
	}
	if !valuesPresent(&row) || sameEverywhere(&row) {
		return row
	}
	switch {
	case m.Class() == gate.ClassLoad:
		row.Verdict, row.Note = VerdictInfo, "a figure of the load generator (the runner), not of the server: never judged"
	case x.group == "overall":
		row.Verdict, row.Note = VerdictInfo, "the sum of the groups: judged per group"
	case x.control != "" && m.Class() != gate.ClassHazard:
		row.Verdict, row.Note = VerdictInfo, fmt.Sprintf("control group (%s): judged only on hazard outcomes", x.control)
	case m.Key() == "events_quarantined": // a presence test, like a control's: not timed
		judgeLyingReplays(&row)
	case t.Info():
		row.Verdict = VerdictInfo
	case x.starved != "" && (m.Timed() || x.control != "" && m.Raced()):
		row.Verdict, row.Note = VerdictInconclusive, x.starved
	case x.control != "":
		judgeControl(&row, x.control)
	case m.Interval():
		judgeLatency(&row, m, t, x.bgs, x.cg)
		if !m.KernelTimed() { // the kernel's clock: the runner's lag is not in it
			explainedByRunner(&row, x.lagGrowth)
		}
	case m.Key() == "tool_calls_ok":
		judgeWorkDone(&row, m, t, x.bgs, x.cg)
	case m.Key() == "sessions_dead":
		_, lo, hi := spread(bvals)
		judgeSpreadNoise(&row, t, lo, hi, hi, false)
	default:
		_, lo, hi := spread(bvals)
		judgeSpread(&row, t, lo, hi, relativeTo(m, x.bgs, hi))
	}
	return row
}

// RunnerLagFactor is how many times its own timer lag's growth a latency must grow by before
// it is the server's: a reply crosses several wake-ups of the generator (the send, the read,
// the parse), each delayed by a stalled runner. Below it the change is one a slower runner can
// explain, and the row is inconclusive.
const RunnerLagFactor = 4

// explainedByRunner turns a latency regression that the generator's own lag growth can
// explain into an inconclusive row.
func explainedByRunner(r *Row, lagGrowth float64) {
	if r.Verdict != VerdictRegressed || lagGrowth <= 0 || r.BaseMax == nil {
		return
	}
	if over := *r.Current - *r.BaseMax; over <= RunnerLagFactor*lagGrowth {
		r.Verdict = VerdictInconclusive
		r.Note = fmt.Sprintf("the runner's own timer lag (p99) grew by %s from the baselines: a slower runner explains up to %d times that",
			gate.FormatValue(gate.UnitDuration, lagGrowth), RunnerLagFactor)
	}
}

// valuesPresent sets the verdict of a row with a side missing, the change otherwise.
func valuesPresent(r *Row) bool {
	switch {
	case r.Base == nil && r.Current == nil:
		r.Verdict = VerdictSame
		return false
	case r.Base == nil || r.Current == nil:
		r.Verdict = VerdictMissing
		if r.Base == nil {
			r.Note = "no value in base"
		} else {
			r.Note = "no value in current"
		}
		return false
	}
	d := *r.Current - *r.Base
	r.Change = &d
	if *r.Base != 0 {
		pct := d / math.Abs(*r.Base) * 100
		r.ChangePct = &pct
	}
	return true
}

// sameEverywhere gives a row whose current value equals every baseline's the verdict same.
func sameEverywhere(r *Row) bool {
	if *r.Current == *r.Base && (r.BaseMin == nil || *r.BaseMin == *r.BaseMax) {
		r.Verdict = VerdictSame
		return true
	}
	return false
}

// spread is the median, min and max of vs (not empty).
func spread(vs []float64) (med, lo, hi float64) {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}

// relativeTo is what a metric's relative tolerance is a fraction of: its own largest baseline
// value, except for errors of one kind, whose 10% are of all the group's errors. Faults make
// errors; which kind a cut connection ends in is a race at the fault's edge, so a handful of a
// new kind among hundreds is noise, while a server that starts failing adds hundreds.
func relativeTo(m gate.Metric, bgs []*results.Group, hi float64) float64 {
	if m.Kind() != gate.KindErrors || m.Key() == "" {
		return hi
	}
	all, _ := gate.ParseMetric("errors")
	ref := hi
	for _, g := range bgs {
		v, _ := results.Value(all, g)
		ref = max(ref, v)
	}
	return ref
}

// judgeSpread judges the current value against the baselines' range [lo, hi]: past the bad
// end by more than the tolerance (its relative part a fraction of ref) and more than the
// baselines' own noise regresses; past the tolerance but within the noise is noise, never ok.
func judgeSpread(r *Row, t gate.Tolerance, lo, hi, ref float64) {
	judgeSpreadNoise(r, t, lo, hi, ref, true)
}

// judgeSpreadNoise is judgeSpread, with a count's own sampling noise (2√n) counted or not: a
// session's death is not a draw of a random process but what the workload's idle times and
// the server's TTL make, and identical runs lose the same sessions (25 of 25 per group in
// every run of seed-incident-fast, starved or not), so deaths are judged against the spread
// the baselines show.
func judgeSpreadNoise(r *Row, t gate.Tolerance, lo, hi, ref float64, countNoise bool) {
	cur := *r.Current
	noise := hi - lo
	if countNoise && r.Unit == gate.UnitCount && t.Rel > 0 {
		// A count's own sampling noise: a process that makes n events on average makes n ± 2√n
		// in 95% of runs; two baselines cannot show that spread. Not for "may not grow at all"
		// (+0), where any growth is the point.
		noise = max(noise, 2*math.Sqrt(math.Abs(hi)))
	}
	if t.Sign < 0 { // falling is worse: mirror
		cur, lo, hi = -cur, -hi, -lo
	}
	over := cur - hi  // > 0: past the bad end
	under := lo - cur // > 0: past the good end
	tol := max(t.AbsIn(r.Unit), t.Rel*math.Abs(ref))
	switch {
	case over > tol && over > noise:
		r.Verdict = VerdictRegressed
	case under > tol && under > noise:
		r.Verdict = VerdictImproved
	case over > tol || under > tol:
		r.Verdict = VerdictNoise
		r.Note = fmt.Sprintf("past the tolerance, within the baselines' noise (±%s)", gate.FormatValue(r.Unit, noise))
	default:
		r.Verdict = VerdictOK
	}
}

// judgeWorkDone judges tool_calls_ok, whose fall regresses unless the turns the loops skipped
// explain it: a loop that missed its turn (a stalled runner or a slow server; the latency rows
// judge the server's part) made fewer calls, not more failures.
func judgeWorkDone(r *Row, m gate.Metric, t gate.Tolerance, bgs []*results.Group, cg *results.Group) {
	var vals []float64
	for _, g := range bgs {
		v, _ := results.Value(m, g)
		vals = append(vals, v)
	}
	_, lo, hi := spread(vals)
	judgeSpread(r, t, lo, hi, hi)
	if r.Verdict != VerdictRegressed {
		return
	}
	var turns []float64
	for _, g := range bgs {
		turns = append(turns, float64(g.Counters["tool_calls_ok"]+g.Counters["calls_skipped"]))
	}
	_, tlo, thi := spread(turns)
	cur := *r.Current + float64(cg.Counters["calls_skipped"])
	probe := Row{Unit: r.Unit, Current: &cur}
	judgeSpread(&probe, t, tlo, thi, thi)
	if probe.Verdict != VerdictRegressed {
		r.Verdict = VerdictNoise
		r.Note = fmt.Sprintf("the loops skipped %d turns (calls_skipped): fewer calls were made, not fewer answered", cg.Counters["calls_skipped"])
	}
}

// minControlShown is how much of a hazard every baseline's control group must have shown for
// its absence now to mean the control lost its power: a count of n moves by about 2√n between
// identical runs, so below 5 a zero is within that noise (a control group that showed 3
// misattributed errors once, by a race of its calls against the sessions' deaths, shows none
// the next time).
const minControlShown = 5

// judgeLyingReplays judges events_quarantined of a probing group for its appearance: events
// are quarantined only when a replay answered 200 for a session the probe then found dead,
// so quarantines where no baseline had one say the server's replays now lie (its GET stopped
// validating the session), even when the probe kept every client safe and a starved runner
// kept the control group from reconnecting at all. More or fewer of them is reported only.
func judgeLyingReplays(r *Row) {
	hi := *r.Base
	if r.BaseMax != nil {
		hi = *r.BaseMax
	}
	r.Tolerance = "appears where no baseline had it: replays answered 200 for dead sessions"
	if hi == 0 && *r.Current > 0 {
		r.Verdict = VerdictRegressed
		r.Note = "the probe found sessions dead whose replay had answered 200"
		return
	}
	r.Verdict = VerdictInfo
}

// judgeControl judges a control group's hazard outcome for its presence.
func judgeControl(r *Row, policy string) {
	lo, hi := *r.Base, *r.Base
	if r.BaseMin != nil {
		lo, hi = *r.BaseMin, *r.BaseMax
	}
	cur := *r.Current
	r.Tolerance = "control: shows the hazard where the baselines do, and only there"
	switch {
	case hi == 0 && cur > 0:
		r.Verdict = VerdictRegressed
		r.Note = fmt.Sprintf("control group (%s): the hazard appeared; no baseline showed it", policy)
	case lo >= minControlShown && cur == 0:
		r.Verdict = VerdictRegressed
		r.Note = fmt.Sprintf("control group (%s): no longer shows the fault it is there to show; was the fault injected?", policy)
	default:
		r.Verdict = VerdictInfo
		r.Note = fmt.Sprintf("control group (%s): judged for showing the hazard, not for its amount", policy)
	}
}
