package engine

import (
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
)

// timeline is the observer that records the export's timeline: every interval from the run's
// start, each group's clients by state (from the fleet's census) and its running counter and
// error totals (from the recorder's atomics).
type timeline struct {
	every time.Duration

	mu      sync.Mutex
	samples []results.Sample
	result  *results.Timeline
}

func (tl *timeline) Every() time.Duration { return tl.every }
func (tl *timeline) Start(*View) error    { return nil }

func (tl *timeline) Observe(v *View, now time.Time) {
	smp := results.Sample{TS: roundS(now.Sub(v.Start)), Groups: map[string]results.GroupSample{}}
	for _, g := range v.Groups() {
		c := g.Census
		gs := results.GroupSample{
			States: results.NonZero(map[string]int64{
				metrics.StateStarting.String():     int64(c.Starting),
				metrics.StateLive.String():         int64(c.Live),
				metrics.StateReconnecting.String(): int64(c.Reconnecting),
				metrics.StateReinit.String():       int64(c.Reinit),
				metrics.StateStopped.String():      int64(c.Stopped),
				results.StateBelievedLiveButDead:   int64(c.BelievedLiveButDead),
			}),
		}
		counters, errs := running(g.Recorder)
		gs.Counters, gs.Errors = results.NonZero(counters), results.NonZero(errs)
		smp.Groups[g.Name] = gs
	}
	tl.mu.Lock()
	tl.samples = append(tl.samples, smp)
	tl.mu.Unlock()
}

// Stop adds a last sample at end when the last tick was a while ago.
func (tl *timeline) Stop(v *View, end time.Time) {
	tl.mu.Lock()
	last := -1.0
	if n := len(tl.samples); n > 0 {
		last = tl.samples[n-1].TS
	}
	tl.mu.Unlock()
	if end.Sub(v.Start).Seconds()-last > tl.every.Seconds()/4 && end.After(v.Start) {
		tl.Observe(v, end)
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.result = &results.Timeline{IntervalS: tl.every.Seconds(), Samples: append([]results.Sample(nil), tl.samples...)}
}

func roundS(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}
