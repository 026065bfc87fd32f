package compare

import (
	"fmt"
	"math"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/results"
)

// How compare judges a session's observed life (session_life, docs/gate.md "Session life"):
// its shortest lives (gate.SessionLifeStat) against the baselines', at any load. Both ends of a
// sample are the server's answers (its last success, its first dead answer), so a starved
// runner moves a sample by its own stall at most, never by the server's TTL; the rule asks for
// a move both in ratio and in seconds, each past what the baselines show among themselves.
const (
	// MinSessionLives is how many sessions a run must have seen answered dead before their
	// lives are judged: one session can die of something else (a restart, a DELETE).
	MinSessionLives = 3
	// SessionLifeFactor is the least ratio that is a change of the server's TTL (1.5: 3 s →
	// 2 s or 3 s → 4.5 s), widened to the square of the baselines' own ratio.
	SessionLifeFactor = 1.5
	// SessionLifeStep is the least move in time: below it, the request cadence (a session's
	// first dead answer comes at its next request) and a starved runner's stalls explain it.
	SessionLifeStep = 500 * time.Millisecond
)

// lifeMetric is the statistic judged; the others of the histogram are shown, not judged.
const lifeMetric = gate.SessionLifeHist + "." + gate.SessionLifeStat

// judgeSessionLife fills the row of a session_life statistic from its baselines' values
// bvals (µs): lifeMetric is judged, the others are reported only.
func judgeSessionLife(r *Row, m gate.Metric, bvals []float64, x judgeCtx) {
	if r.Base == nil && r.Current != nil && m.Name == lifeMetric && diedNowOnly(x) {
		n := results.Samples(m, x.cg)
		if n >= MinSessionLives {
			r.Verdict = VerdictRegressed
			r.Note = lifeSentence(x.group, *r.Current, 0, declaredOf(x))
			return
		}
	}
	if !valuesPresent(r) || sameEverywhere(r) {
		return
	}
	if m.Name != lifeMetric {
		r.Verdict, r.Note = VerdictInfo, "read with "+lifeMetric+", which is judged"
		return
	}
	n := results.Samples(m, x.cg)
	for _, g := range x.bgs {
		n = min(n, results.Samples(m, g))
	}
	if n < MinSessionLives {
		r.Verdict = VerdictInfo
		r.Note = fmt.Sprintf("too few sessions answered dead to judge (%d in a run; needs %d)", n, MinSessionLives)
		return
	}
	_, lo, hi := spread(bvals)
	cur := *r.Current
	factor := SessionLifeFactor
	if lo > 0 {
		factor = max(factor, (hi/lo)*(hi/lo))
	}
	step := max(float64(SessionLifeStep.Microseconds()), hi-lo)
	switch {
	case cur < lo && cur*factor <= lo && lo-cur >= step, cur > hi && cur >= hi*factor && cur-hi >= step:
		r.Verdict = VerdictRegressed
		r.Note = lifeSentence(x.group, cur, *r.Base, declaredOf(x))
	case cur < lo || cur > hi:
		r.Verdict = VerdictOK
		r.Note = fmt.Sprintf("within the bound: a change needs a ratio of %.2f and %s past the baselines' %s..%s", factor,
			gate.FormatValue(gate.UnitDuration, step), gate.FormatValue(gate.UnitDuration, lo), gate.FormatValue(gate.UnitDuration, hi))
	default:
		r.Verdict = VerdictOK
	}
}

// diedNowOnly says that no baseline saw a session answered dead while each measured it (its
// export says what TTL was declared, so it is not one made before session_life existed, whose
// empty histogram says nothing), and that the current run's sessions were answered dead
// sooner than the declared TTL (or no TTL is declared): the server now ends sessions that
// lived through the same workload before.
func diedNowOnly(x judgeCtx) bool {
	if len(x.bgs) == 0 || x.cg == nil {
		return false
	}
	for _, g := range x.bgs {
		if g.SessionTTL == nil || g.Histograms[gate.SessionLifeHist].Count > 0 {
			return false
		}
	}
	d := declaredOf(x)
	if d == nil || d.DeclaredS <= 0 {
		return true
	}
	return float64(x.cg.Histograms[gate.SessionLifeHist].P50US) < d.DeclaredS*1e6
}

// lifeSentence is what a regressed session life says: "group probe: sessions now die after
// about 1.0 s (was 3.0 s; the workload declares 3 s)"; base 0: none died before.
func lifeSentence(group string, cur, base float64, declared *results.SessionTTL) string {
	verb, was := "die after", "was "+aboutSeconds(base)
	switch {
	case base == 0:
		was = "none died before"
	case cur > base:
		verb = "live until"
	}
	decl := "the workload declares no TTL"
	if declared != nil && declared.DeclaredS > 0 {
		decl = "the workload declares " + declared.String()
	} else if declared == nil {
		decl = "the export does not say what the workload declares"
	}
	return fmt.Sprintf("group %s: sessions now %s about %s (%s; %s)", group, verb, aboutSeconds(cur), was, decl)
}

// aboutSeconds is a duration in µs as a reader says it: "1.0 s", "12 s", "450 ms".
func aboutSeconds(us float64) string {
	s := us / 1e6
	switch {
	case s < 1:
		return fmt.Sprintf("%.0f ms", math.Round(us/1e3))
	case s < 10:
		return fmt.Sprintf("%.1f s", s)
	}
	return fmt.Sprintf("%.0f s", s)
}

// declaredOf is the TTL the current run's group declares, else a baseline's.
func declaredOf(x judgeCtx) *results.SessionTTL {
	if x.cg != nil && x.cg.SessionTTL != nil {
		return x.cg.SessionTTL
	}
	for _, g := range x.bgs {
		if g.SessionTTL != nil {
			return g.SessionTTL
		}
	}
	return nil
}
