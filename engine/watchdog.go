package engine

import (
	"fmt"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/metrics"
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
		var g judged
		if th.Scope == "overall" {
			g = liveGroup(v.recs)
		} else {
			for _, rec := range v.recs {
				if rec.Name == th.Scope {
					g = liveGroup{rec}
				}
			}
		}
		if g == nil {
			continue
		}
		if val, ok := g.Value(th.Metric); ok && !th.Holds(val) {
			el := now.Sub(v.Start).Round(100 * time.Millisecond)
			wd.fired = true
			wd.abort(th, fmt.Sprintf("threshold %s failed %s into the run (%s.%s reached %s)", th.Expr, el, th.Scope, th.Metric.Name, th.Metric.Format(val)))
			return
		}
	}
}

// judged is what a threshold is judged on while the run goes on: a metric's value, or false
// when it has none.
type judged interface {
	Value(m gate.Metric) (float64, bool)
}

// liveGroup is recorders' numbers now (one group's, or the sum of several: overall), read from
// their atomics: the counters, errors and false-healthy time that only grow during a run,
// which are all an abort_on_fail threshold may name.
type liveGroup []*metrics.Recorder

var counterByName = func() map[string]metrics.Counter {
	m := map[string]metrics.Counter{}
	for _, c := range metrics.Counters() {
		m[c.String()] = c
	}
	return m
}()

func (g liveGroup) Value(m gate.Metric) (float64, bool) {
	switch m.Kind() {
	case gate.KindCounter:
		c, ok := counterByName[m.Key()]
		return float64(g.counter(c)), ok
	case gate.KindErrors:
		var n int64
		for k, v := range g.errors() {
			if m.Key() == "" || m.Key() == k {
				n += v
			}
		}
		return float64(n), true
	case gate.KindFalseHealthy:
		var s float64
		for _, rec := range g {
			s += rec.FalseHealthy().Seconds()
		}
		return s, true
	}
	return 0, false // not a metric that only grows: judged at the end, on the export
}

// counter is the sum of the recorders' counter c.
func (g liveGroup) counter(c metrics.Counter) int64 {
	var n int64
	for _, rec := range g {
		n += rec.Get(c)
	}
	return n
}

// errors sums the recorders' transport errors by kind; kinds with none are left out.
func (g liveGroup) errors() map[string]int64 {
	errs := map[string]int64{}
	for _, rec := range g {
		for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
			if n := rec.Errors(k); n > 0 {
				errs[k.String()] += n
			}
		}
	}
	return errs
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
