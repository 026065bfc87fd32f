package compare

import (
	"fmt"
	"math"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/results"
)

// MinLatencyBaselines is how many baseline runs compare needs before it judges a latency: the
// samples of one run are not independent (a stalled moment delays many calls at once), so how
// far a statistic moves between identical runs is learnt from runs, not from one run's sample
// count. Measured on the demo: two back-to-back runs differ by up to 3x in probe p50.
const MinLatencyBaselines = 3

// BurstFactor is how far past the worst baseline a statistic of a burst histogram must go to
// be the server's: measured on the demo, two back-to-back runs differ by up to 3x in the
// probe p50 of 50 probes sent in one burst.
const BurstFactor = 3.0

// burstHists are the histograms a fault fills all at once (every client reconnects, probes
// and learns of its session's death after the same fault): the samples of one run are not
// independent draws.
var burstHists = map[string]bool{"probe_latency": true, "reconnect_latency": true, "detection_delay": true, "recovery_latency": true}

// judgeLatency judges a latency percentile or mean against the baselines' run-to-run spread of
// that statistic: the current value regresses when it is past the worst baseline by more than
// the tolerance and by more than the baselines differ among themselves, counted as a ratio
// (a stall delays everything in flight, so latency moves between identical runs by factors,
// not by amounts). The samples inside one run are never treated as independent draws.
func judgeLatency(r *Row, m gate.Metric, t gate.Tolerance, bgs []*results.Group, cg *results.Group) {
	var vals []float64
	for _, g := range bgs {
		if v, ok := results.Value(m, g); ok {
			vals = append(vals, v)
		}
	}
	if len(vals) < MinLatencyBaselines {
		r.Verdict = VerdictInfo
		r.Note = fmt.Sprintf("not judged: latency moves between identical runs by more than one run shows; give %d or more baselines", MinLatencyBaselines)
		return
	}
	n := results.Samples(m, cg)
	for _, g := range bgs {
		n = min(n, results.Samples(m, g))
	}
	if need := m.MinSamples(); n < need {
		r.Verdict = VerdictInfo
		r.Note = fmt.Sprintf("too few samples to judge (%d; %s needs %d)", n, m.Name, need)
		return
	}
	_, lo, hi := spread(vals)
	cur := *r.Current
	ratio := 1.0
	if lo > 0 {
		ratio = hi / lo
	}
	// Past the bad end: over; past the good end: under. Falling is worse when Sign < 0.
	over, under := cur-hi, lo-cur
	badRef, goodRef := hi, lo
	if t.Sign < 0 {
		over, under, badRef, goodRef = lo-cur, cur-hi, lo, hi
	}
	tolOver := max(t.AbsIn(r.Unit), t.Rel*math.Abs(badRef))
	tolUnder := max(t.AbsIn(r.Unit), t.Rel*math.Abs(goodRef))
	// Three draws rarely show a statistic's whole spread (a fourth lands past their max by
	// their range in about 7% of cases), so the margin is the square of their ratio; and a
	// histogram filled in bursts (every client probes at once after the same fault) is one
	// draw per run however many samples it holds: it must more than triple.
	factor := ratio * ratio
	if burstHists[m.Key()] {
		factor = max(factor, BurstFactor)
	}
	spreadOver := math.Abs(badRef) * (factor - 1)
	spreadUnder := math.Abs(goodRef) * (1 - 1/factor)
	spreadPct := (ratio - 1) * 100
	switch {
	case over > tolOver && over > spreadOver:
		r.Verdict = VerdictRegressed
		r.Note = fmt.Sprintf("past the worst of %d baselines by %s; they differ by %.0f%% among themselves",
			len(vals), gate.FormatValue(r.Unit, over), spreadPct)
	case under > tolUnder && under > spreadUnder:
		r.Verdict = VerdictImproved
	case over > tolOver || under > tolUnder:
		r.Verdict = VerdictNoise
		r.Note = fmt.Sprintf("past the tolerance, within the run-to-run spread (the baselines differ by %.0f%%; margin x%.2f)", spreadPct, factor)
	default:
		r.Verdict = VerdictOK
	}
}
