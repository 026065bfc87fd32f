package engine

import (
	"fmt"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/results"
)

// watchdog is the observer that judges the thresholds with abort_on_fail while the run goes
// on, from the recorders' atomics. The first that fails for good calls abort, once.
type watchdog struct {
	ths   []gate.Threshold // all with AbortOnFail, all Early
	abort func(th gate.Threshold, reason string)
	fired bool
}

func (wd *watchdog) Every() time.Duration  { return 200 * time.Millisecond }
func (wd *watchdog) Start(*View) error     { return nil }
func (wd *watchdog) Stop(*View, time.Time) {}

func (wd *watchdog) Observe(v *View, now time.Time) {
	if wd.fired {
		return
	}
	for _, th := range wd.ths {
		var g results.Group
		if th.Scope == "overall" {
			g = live(v.recs...)
		} else {
			for _, rec := range v.recs {
				if rec.Name == th.Scope {
					g = live(rec)
				}
			}
		}
		if g.Counters == nil {
			continue
		}
		if val, ok := results.Value(th.Metric, &g); ok && !th.Holds(val) {
			el := now.Sub(v.Start).Round(100 * time.Millisecond)
			wd.fired = true
			wd.abort(th, fmt.Sprintf("threshold %s failed %s into the run (%s.%s reached %s)", th.Expr, el, th.Scope, th.Metric.Name, th.Metric.Format(val)))
			return
		}
	}
}

// abortThresholds are the thresholds to judge while the run goes on.
func abortThresholds(ths []gate.Threshold) []gate.Threshold {
	var out []gate.Threshold
	for _, th := range ths {
		if th.AbortOnFail && th.Early() {
			out = append(out, th)
		}
	}
	return out
}
