package results

import (
	"fmt"
	"github.com/mcpchaos/mcpchaos/gate"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// confidenceZ is the normal quantile of the two-sided 99% intervals compare puts around a
// histogram statistic: a run is judged on what its samples can tell, not on one draw.
const confidenceZ = 2.576

// MinLatencyBaselines is how many baseline runs compare needs before it judges a latency: the
// samples of one run are not independent (a stalled moment delays many calls at once), so how
// far a percentile moves between identical runs is learnt from runs, not from one run's count.
// Measured on the demo: two back-to-back runs differ by up to 3x in probe p50.
const MinLatencyBaselines = 3

// interval is a range that holds a statistic's true value with 99% confidence.
type interval struct{ lo, hi float64 }

// statInterval is the 99% confidence interval of a histogram statistic ("p" or "mean") of h.
// For a percentile it is distribution-free: the values at the ranks q·n ± z·√(n·q·(1−q)) (the
// order statistics' binomial interval), read from the full histogram; for the mean, the mean
// ± z·σ/√n.
func statInterval(h *hdrhistogram.Histogram, m gate.Metric) (interval, bool) {
	n := float64(h.TotalCount())
	if n == 0 {
		return interval{}, false
	}
	if m.Stat() == "mean" {
		half := confidenceZ * h.StdDev() / math.Sqrt(n)
		return interval{h.Mean() - half, h.Mean() + half}, true
	}
	q := m.Percentile() / 100
	half := confidenceZ * math.Sqrt(q*(1-q)/n)
	lo, hi := math.Max(q-half, 0), math.Min(q+half, 1)
	return interval{float64(h.ValueAtQuantile(lo * 100)), float64(h.ValueAtQuantile(hi * 100))}, true
}

// pooled merges the baseline groups' histogram key into one histogram (nil if none has it).
func pooled(bgs []*Group, key string) *hdrhistogram.Histogram {
	var out *hdrhistogram.Histogram
	for _, g := range bgs {
		h, err := g.Histograms[key].Decoded()
		if err != nil || h.TotalCount() == 0 {
			continue
		}
		if out == nil {
			out = metrics.NewHistogram()
		}
		out.Merge(h)
	}
	return out
}

// judgeInterval judges a latency percentile or mean: the current run's 99% interval against the
// baselines' (each baseline's value, and the interval of all their samples pooled), with the
// tolerance on top. Both values are present.
func judgeInterval(r *Row, m gate.Metric, t gate.Tolerance, bgs []*Group, cg *Group) {
	if *r.Current == *r.Base && (r.BaseMin == nil || *r.BaseMin == *r.BaseMax) {
		r.Verdict = VerdictSame
		return
	}
	if t.Info() {
		r.Verdict = VerdictInfo
		return
	}
	if len(bgs) < MinLatencyBaselines {
		r.Verdict = VerdictInfo
		r.Note = fmt.Sprintf("not judged: latency moves between identical runs by more than its samples show; give %d or more baselines", MinLatencyBaselines)
		return
	}
	n := cg.Histograms[m.Key()].Count
	for _, g := range bgs {
		n = min(n, g.Histograms[m.Key()].Count)
	}
	if need := m.MinSamples(); n < need {
		r.Verdict = VerdictInfo
		r.Note = fmt.Sprintf("too few samples to judge (%d; %s needs %d)", n, m.Name, need)
		return
	}
	curH, err := cg.Histograms[m.Key()].Decoded()
	pool := pooled(bgs, m.Key())
	if err != nil || pool == nil {
		r.Verdict = VerdictInfo
		return
	}
	cur, ok1 := statInterval(curH, m)
	base, ok2 := statInterval(pool, m)
	if !ok1 || !ok2 {
		r.Verdict = VerdictInfo
		return
	}
	if r.BaseMin != nil {
		base.lo, base.hi = min(base.lo, *r.BaseMin), max(base.hi, *r.BaseMax)
	}
	base.lo, base.hi = min(base.lo, *r.Base), max(base.hi, *r.Base)
	if t.Sign < 0 {
		cur, base = interval{-cur.hi, -cur.lo}, interval{-base.hi, -base.lo}
	}
	// Latency moves between identical runs by factors, not by amounts (a stall delays
	// everything in flight): the baselines' spread counts as a ratio, max/min of their values.
	ratio := 1.0
	if r.BaseMin != nil && *r.BaseMin > 0 {
		ratio = *r.BaseMax / *r.BaseMin
	}
	over := cur.lo - base.hi
	under := base.lo - cur.hi
	limit := func(ref float64) float64 { return max(t.AbsIn(r.Unit), math.Abs(ref)*max(t.Rel, ratio-1)) }
	pointOver := *r.Current*float64(t.Sign) - base.hi
	switch {
	case over > 0 && over > limit(base.hi):
		r.Verdict = VerdictRegressed
		r.Note = fmt.Sprintf("99%% interval %s..%s, baselines up to %s", gate.FormatValue(r.Unit, cur.lo), gate.FormatValue(r.Unit, cur.hi), gate.FormatValue(r.Unit, base.hi))
	case under > 0 && under > limit(base.lo):
		r.Verdict = VerdictImproved
	default:
		r.Verdict = VerdictOK
		if pointOver > limit(base.hi) {
			r.Note = fmt.Sprintf("within sampling noise (%d samples: 99%% interval %s..%s)", curH.TotalCount(),
				gate.FormatValue(r.Unit, math.Abs(cur.lo)), gate.FormatValue(r.Unit, math.Abs(cur.hi)))
		}
	}
}
