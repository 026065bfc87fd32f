package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/clients"
	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
)

// sampler records the run's timeline: every interval, from the run's start, each group's
// clients by state (from the fleet's Census) and its running counter and error totals (from
// the recorder's atomics). One goroutine, owned by run, stopped by stop; workers never see it.
type sampler struct {
	start  time.Time
	every  time.Duration
	fleets []*clients.Fleet
	recs   []*metrics.Group

	mu       sync.Mutex
	samples  []results.Sample
	believed []atomic.Int64 // last census's believed-live-but-dead, per group, for live metrics
}

func newSampler(start time.Time, every time.Duration, fleets []*clients.Fleet, recs []*metrics.Group) *sampler {
	return &sampler{start: start, every: every, fleets: fleets, recs: recs, believed: make([]atomic.Int64, len(recs))}
}

// run samples at start, start+every, ... until ctx ends.
func (s *sampler) run(ctx context.Context) {
	timer := time.NewTimer(time.Until(s.start))
	defer timer.Stop()
	for k := 1; ; k++ {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		s.sample(time.Now())
		timer.Reset(time.Until(s.start.Add(time.Duration(k) * s.every)))
	}
}

func (s *sampler) sample(now time.Time) {
	smp := results.Sample{TS: roundS(now.Sub(s.start)), Groups: make(map[string]results.GroupSample, len(s.recs))}
	for i, rec := range s.recs {
		c := s.fleets[i].Census()
		s.believed[i].Store(int64(c.BelievedLiveButDead))
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
		lg := liveGroup(rec)
		gs.Counters, gs.Errors = results.NonZero(lg.Counters), results.NonZero(lg.Errors)
		smp.Groups[rec.Name] = gs
	}
	s.mu.Lock()
	s.samples = append(s.samples, smp)
	s.mu.Unlock()
}

// timeline is what was sampled, with a last sample at end when the last tick was a while ago.
func (s *sampler) timeline(end time.Time) *results.Timeline {
	s.mu.Lock()
	last := -1.0
	if n := len(s.samples); n > 0 {
		last = s.samples[n-1].TS
	}
	s.mu.Unlock()
	if end.Sub(s.start).Seconds()-last > s.every.Seconds()/4 && end.After(s.start) {
		s.sample(end)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &results.Timeline{IntervalS: s.every.Seconds(), Samples: append([]results.Sample(nil), s.samples...)}
}

func roundS(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// liveGroup reads a recorder's counters, errors and false-healthy time now (no histograms),
// as a results.Group that the threshold vocabulary can read.
func liveGroup(recs ...*metrics.Group) results.Group {
	g := results.Group{Counters: map[string]int64{}, Errors: map[string]int64{}}
	for _, rec := range recs {
		g.Name = rec.Name
		g.Clients += rec.Clients
		for _, c := range metrics.Counters() {
			g.Counters[c.String()] += rec.Get(c)
		}
		for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
			g.Errors[k.String()] += rec.Errors(k)
		}
		g.FalseHealthySeconds += rec.FalseHealthy().Seconds()
	}
	if len(recs) != 1 {
		g.Name = "overall"
	}
	return g
}

// watchdog judges the thresholds with abort_on_fail while the run goes on, every few hundred
// milliseconds, from the recorders' atomics. The first that fails for good calls abort once.
type watchdog struct {
	ths   []gate.Threshold // all with AbortOnFail, all Early
	recs  []*metrics.Group
	start time.Time
	abort func(th gate.Threshold, reason string)
}

func (wd *watchdog) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if wd.check() {
			return
		}
	}
}

// check judges every threshold now; true when one failed (and abort was called).
func (wd *watchdog) check() bool {
	for _, th := range wd.ths {
		var g results.Group
		if th.Scope == "overall" {
			g = liveGroup(wd.recs...)
		} else {
			for _, rec := range wd.recs {
				if rec.Name == th.Scope {
					g = liveGroup(rec)
				}
			}
		}
		if g.Counters == nil {
			continue
		}
		v, ok := results.Value(th.Metric, &g)
		if ok && !th.Holds(v) {
			el := time.Since(wd.start).Round(100 * time.Millisecond)
			wd.abort(th, fmt.Sprintf("threshold %s failed %s into the run (%s.%s reached %s)", th.Expr, el, th.Scope, th.Metric.Name, th.Metric.Format(v)))
			return true
		}
	}
	return false
}
