package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/generator"
	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Observer is fed by a run while it goes on, in the manner of k6's outputs: Start once the
// fleet is set up (an error stops the run before its clients start), Stop once the clients
// have stopped. An observer that also wants the live numbers at intervals implements Ticker;
// the run finds out by a type assertion, so an observer that only starts and stops something
// (a progress view, an HTTP endpoint) has nothing else to write.
type Observer interface {
	Start(v *View) error
	Stop(v *View, end time.Time)
}

// Ticker is an Observer's optional capability: Observe is called every Every() from the run's
// start (never when Every is 0), on a goroutine of the observer's own; the workers never call
// it.
type Ticker interface {
	Every() time.Duration
	Observe(v *View, now time.Time)
}

// View is a run's live numbers, read from the recorders' atomics and the fleets' census.
type View struct {
	Workload string
	Shard    *Shard            // nil: the whole fleet
	Start    time.Time         // when the clients start
	Planned  time.Duration     // how long the run is planned to last
	RunID    string            // the run's id, as its export records it
	Labels   map[string]string // the run's labels (Plan.Labels)
	// Generator reads the load generator's own figures of the last second (package generator).
	Generator func() generator.Live

	phases     []workloads.Phase
	faultNames []string
	faultsNow  func() []string
	// faultsDuring names the faults in force in a window since the start (faultwindow.go).
	faultsDuring func(from, to time.Duration) []string

	fleets      []*fleet.Fleet
	recs        []*metrics.Recorder
	believed    []atomic.Int64 // the last census's believed-live-but-dead, per group
	sessionless bool           // the target keeps no sessions: session figures do not apply
	servesAnyID bool           // the target serves ids it never issued: deaths cannot be checked
}

// GroupStatus is a client group's state now: its sessions by state and its recorder.
type GroupStatus struct {
	Name     string
	Census   fleet.Census
	Recorder *metrics.Recorder
	// Withheld says that the figures derived from session deaths (false-live above all) must
	// not be read as measured: results.NotApplicable (the target keeps no sessions) or
	// results.EstimateRefuted (sessions answered after their estimated death),
	// results.ServesAnyID (the target serves ids it never issued); "" otherwise.
	Withheld string
}

func newView(w string, shard *Shard, planned time.Duration, fleets []*fleet.Fleet, recs []*metrics.Recorder) *View {
	return &View{Workload: w, Shard: shard, Planned: planned, fleets: fleets, recs: recs, believed: make([]atomic.Int64, len(recs))}
}

// Groups takes every group's census now (it walks the fleet's clients: call it at most a
// few times a second).
func (v *View) Groups() []GroupStatus {
	out := make([]GroupStatus, len(v.recs))
	for i, rec := range v.recs {
		c := v.fleets[i].Census()
		v.believed[i].Store(int64(c.BelievedLiveButDead))
		out[i] = GroupStatus{Name: rec.Name, Census: c, Recorder: rec}
		switch {
		case v.sessionless:
			out[i].Withheld = results.NotApplicable
		case v.servesAnyID:
			out[i].Withheld = results.ServesAnyID
		case v.fleets[i].Report().EstimateRefuted > 0:
			out[i].Withheld = results.EstimateRefuted
		}
	}
	return out
}

// Phase is the workload phase in force at now ("" before the start and after the end).
func (v *View) Phase(now time.Time) string {
	el := now.Sub(v.Start)
	for _, p := range v.phases {
		if el >= p.Start && el < p.End() {
			return p.Name
		}
	}
	return ""
}

// Phases names the plan's phases, in order.
func (v *View) Phases() []string {
	out := make([]string, len(v.phases))
	for i, p := range v.phases {
		out[i] = p.Name
	}
	return out
}

// FaultNames names the plan's faults, in order.
func (v *View) FaultNames() []string { return v.faultNames }

// Faults names the faults in force now on some group's proxy.
func (v *View) Faults() []string {
	if v.faultsNow == nil {
		return nil
	}
	return v.faultsNow()
}

// Recorders are the groups' recorders, whose counters and histograms may be read at any time.
func (v *View) Recorders() []*metrics.Recorder { return v.recs }

// Believed is group i's sessions believed live but dead at the last census (Groups).
func (v *View) Believed(i int) int64 { return v.believed[i].Load() }

// observing runs the observers: each Ticker ticks at start, start+every, ... on a goroutine of its
// own until ctx ends; stop then calls every Stop.
type observing struct {
	v   *View
	obs []Observer
	wg  sync.WaitGroup
}

func (o *observing) start(ctx context.Context) {
	for _, ob := range o.obs {
		tk, ok := ob.(Ticker)
		if !ok || tk.Every() <= 0 {
			continue
		}
		o.wg.Go(func() {
			defer guard.Catch(ctx, "observer")
			tick(ctx, o.v.Start, tk.Every(), func(now time.Time) { tk.Observe(o.v, now) })
		})
	}
}

// stop waits for the observers' goroutines and calls their Stop, in reverse order of Start.
func (o *observing) stop(ctx context.Context, end time.Time) {
	o.wg.Wait()
	for i := len(o.obs) - 1; i >= 0; i-- {
		func() {
			defer guard.Catch(ctx, "observer")
			o.obs[i].Stop(o.v, end)
		}()
	}
}

// tick calls fn at start, start+every, ... until ctx ends. A tick that comes late (the
// process starved, or fn took longer than every) is not made up for: the next is the next one
// due after fn returned.
func tick(ctx context.Context, start time.Time, every time.Duration, fn func(time.Time)) {
	timer := time.NewTimer(time.Until(start))
	defer timer.Stop()
	for k := int64(1); ; k++ {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		fn(time.Now())
		now := time.Now() // after fn: the ticks a slow observer missed are skipped, not made up at once
		next := start.Add(time.Duration(k) * every)
		for !next.After(now) {
			k++
			next = start.Add(time.Duration(k) * every)
		}
		timer.Reset(time.Until(next))
	}
}
