package engine

import (
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
)

// timeline is the observer that records the export's timeline: every interval from the run's
// start, each group's clients by state (from the fleet's census) and its running counter and
// error totals (from the recorder's atomics). While the run goes on it keeps plain numbers;
// the export's form (results.Timeline, keyed by name, zeros left out) is made once, at Stop.
type timeline struct {
	every time.Duration

	mu      sync.Mutex
	samples []sample
	result  *results.Timeline
}

// sample is every group's numbers at one moment, at after the run's start.
type sample struct {
	at     time.Duration
	groups []groupSample
}

type groupSample struct {
	name     string
	census   fleet.Census
	counters []int64 // by metrics.Counter
	errs     []int64 // by metrics.ErrorKind
}

func (tl *timeline) Every() time.Duration { return tl.every }
func (tl *timeline) Start(*View) error    { return nil }

func (tl *timeline) Observe(v *View, now time.Time) {
	smp := sample{at: now.Sub(v.Start)}
	for _, g := range v.Groups() {
		gs := groupSample{name: g.Name, census: g.Census}
		for _, c := range metrics.Counters() {
			gs.counters = append(gs.counters, g.Recorder.Get(c))
		}
		for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
			gs.errs = append(gs.errs, g.Recorder.Errors(k))
		}
		smp.groups = append(smp.groups, gs)
	}
	tl.mu.Lock()
	tl.samples = append(tl.samples, smp)
	tl.mu.Unlock()
}

// Stop adds a last sample at end when the last tick was a while ago, and makes the export's
// timeline.
func (tl *timeline) Stop(v *View, end time.Time) {
	tl.mu.Lock()
	last := time.Duration(-1)
	if n := len(tl.samples); n > 0 {
		last = tl.samples[n-1].at
	}
	tl.mu.Unlock()
	if end.Sub(v.Start)-last > tl.every/4 && end.After(v.Start) {
		tl.Observe(v, end)
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	out := &results.Timeline{IntervalS: tl.every.Seconds(), Samples: make([]results.Sample, len(tl.samples))}
	for i, s := range tl.samples {
		out.Samples[i] = s.exported()
	}
	tl.result = out
}

// exported is the sample in the export's form.
func (s sample) exported() results.Sample {
	out := results.Sample{TS: roundS(s.at), Groups: map[string]results.GroupSample{}}
	for _, g := range s.groups {
		c := g.census
		counters, errs := map[string]int64{}, map[string]int64{}
		for i, c := range metrics.Counters() {
			counters[c.String()] = g.counters[i]
		}
		for i, k := 0, metrics.ErrConnect; k <= metrics.ErrOther; i, k = i+1, k+1 {
			errs[k.String()] = g.errs[i]
		}
		out.Groups[g.name] = results.GroupSample{
			States: results.NonZero(map[string]int64{
				metrics.StateStarting.String():     int64(c.Starting),
				metrics.StateLive.String():         int64(c.Live),
				metrics.StateReconnecting.String(): int64(c.Reconnecting),
				metrics.StateReinit.String():       int64(c.Reinit),
				metrics.StateStopped.String():      int64(c.Stopped),
				results.StateBelievedLiveButDead:   int64(c.BelievedLiveButDead),
			}),
			Counters: results.NonZero(counters),
			Errors:   results.NonZero(errs),
		}
	}
	return out
}

func roundS(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}
