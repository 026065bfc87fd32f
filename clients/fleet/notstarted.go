package fleet

import (
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// notStarted counts a turn of a calls phase that came (at el since the start) before its
// client's first session was live. Such a turn is no evidence about the server (how soon a
// client starts is the machine's as much as the server's), so the server-side shortfall
// (PhaseTurns.NotMade) leaves it out; but it is a call the plan asked for and nobody made, so
// calls_not_made counts it, and a phase that made few of its planned turns this way makes the
// run incomplete (engine's shortfalls).
func (f *Fleet) notStarted(el time.Duration) {
	f.notStartedBy[f.phaseAt(el)].Add(1)
	f.rec.Inc(metrics.CallsNotMade)
}
