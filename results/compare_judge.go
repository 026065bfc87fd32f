package results

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcpchaos/mcpchaos/gate"
)

// How compare judges one number: against the baselines' spread (counters, errors, ratios), for
// the hazard's presence (control groups), or from the histograms (compare_hist.go).

// judgeMetric fills a row for one metric of one group: the values, and the verdict by the
// metric's kind (spread for counters, confidence intervals for histogram statistics).
func judgeMetric(m gate.Metric, t gate.Tolerance, bgs []*Group, cg *Group) Row {
	row := Row{Metric: m.Name, Unit: m.Unit(), Tolerance: t.Describe(m.Unit())}
	var bvals []float64
	for _, g := range bgs {
		if v, ok := Value(m, g); ok {
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
	if cg != nil {
		if v, ok := Value(m, cg); ok {
			row.Current = &v
		}
	}
	if !valuesPresent(&row) {
		return row
	}
	if m.Interval() {
		judgeInterval(&row, m, t, bgs, cg)
		return row
	}
	_, lo, hi := spread(bvals)
	judgeSpread(&row, t, lo, hi, relativeTo(m, bgs, hi))
	return row
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
func relativeTo(m gate.Metric, bgs []*Group, hi float64) float64 {
	if m.Kind() != gate.KindErrors || m.Key() == "" {
		return hi
	}
	all, _ := gate.ParseMetric("errors")
	ref := hi
	for _, g := range bgs {
		v, _ := Value(all, g)
		ref = max(ref, v)
	}
	return ref
}

// judgeSpread judges the current value against the baselines' range [lo, hi]: past the
// bad end by more than the tolerance (its relative part a fraction of ref) and more than the
// range itself regresses.
func judgeSpread(r *Row, t gate.Tolerance, lo, hi, ref float64) {
	cur := *r.Current
	if cur == *r.Base && lo == hi {
		r.Verdict = VerdictSame
		return
	}
	if t.Info() {
		r.Verdict = VerdictInfo
		return
	}
	noise := hi - lo
	if r.Unit == gate.UnitCount && t.Rel > 0 {
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
	limit := max(t.AbsIn(r.Unit), t.Rel*math.Abs(ref), noise)
	switch {
	case over > 0 && over > limit:
		r.Verdict = VerdictRegressed
	case under > 0 && under > limit:
		r.Verdict = VerdictImproved
	default:
		r.Verdict = VerdictOK
		if noise > 0 && (over > 0 || under > 0) {
			r.Note = "within the baselines' spread"
		}
	}
}

// judgeControl replaces a control group's counter verdict by its presence test.
func judgeControl(r *Row, policy string) {
	if r.Base == nil || r.Current == nil {
		return
	}
	lo, hi := *r.Base, *r.Base
	if r.BaseMin != nil {
		lo, hi = *r.BaseMin, *r.BaseMax
	}
	cur := *r.Current
	switch {
	case hi == 0 && cur > 0:
		r.Verdict = VerdictRegressed
		r.Note = fmt.Sprintf("control group (%s): the hazard appeared; no baseline showed it", policy)
	case lo > 0 && cur == 0:
		r.Verdict = VerdictRegressed
		r.Note = fmt.Sprintf("control group (%s): no longer shows the fault it is there to show; was the fault injected?", policy)
	case cur == *r.Base && lo == hi:
		r.Verdict = VerdictSame
		r.Note = ""
	default:
		r.Verdict = VerdictInfo
		r.Note = fmt.Sprintf("control group (%s): judged for showing the hazard, not for its amount", policy)
	}
	r.Tolerance = "control: shows the hazard where the baselines do, and only there"
}
