package results

import (
	"math"
	"time"
)

// Timeline is what the run looked like as it went: a sample about every IntervalS seconds.
type Timeline struct {
	IntervalS float64  `json:"interval_s"`
	Samples   []Sample `json:"samples"`
}

// Sample is every group's state at one moment, TS seconds after run.start.
type Sample struct {
	TS     float64                `json:"t_s"`
	Groups map[string]GroupSample `json:"groups"`
}

// GroupSample is one group at one moment. States counts clients by the state they believe
// their session is in (starting, live, reconnecting, reinit, stopped) plus
// believed_live_but_dead: live in the client's eyes, dead in the server's. Counters and Errors
// are running totals since the start (zeros left out).
type GroupSample struct {
	States   map[string]int64 `json:"states,omitempty"`
	Counters map[string]int64 `json:"counters,omitempty"`
	Errors   map[string]int64 `json:"errors,omitempty"`
}

// StateBelievedLiveButDead is the timeline state of clients whose session died unnoticed.
const StateBelievedLiveButDead = "believed_live_but_dead"

// SampleInterval is the timeline's interval for a run planned to last planned: a second, a
// quarter of a second for runs under a minute (a 10-second demo gets a timeline worth
// drawing), and coarser for runs longer than about 17 minutes, so that a timeline has at most
// ~1000 samples.
func SampleInterval(planned time.Duration) time.Duration {
	const most = 1000
	switch {
	case planned < time.Minute:
		return 250 * time.Millisecond
	case planned > most*time.Second:
		return time.Duration(math.Ceil(planned.Seconds()/most)) * time.Second
	}
	return time.Second
}

// Add sums o into s: states, counters and errors.
func (s *GroupSample) Add(o GroupSample) {
	s.States = AddCounts(s.States, o.States)
	s.Counters = AddCounts(s.Counters, o.Counters)
	s.Errors = AddCounts(s.Errors, o.Errors)
}

// AddCounts adds src into dst, leaving zeros out; dst is made when nil and something is added.
func AddCounts(dst, src map[string]int64) map[string]int64 {
	for k, v := range src {
		if v == 0 {
			continue
		}
		if dst == nil {
			dst = map[string]int64{}
		}
		dst[k] += v
	}
	return dst
}

// NonZero returns m without its zero entries (nil if none are left): timelines leave zeros out.
func NonZero(m map[string]int64) map[string]int64 {
	return AddCounts(nil, m)
}

// PhaseAt records when a phase of the workload was in force, in seconds since the run's start
// (v2): with the faults' added_at_s/removed_at_s, the export's phase and fault timeline.
type PhaseAt struct {
	Phase  string  `json:"phase"`
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// Turns and CallsNotMade count, per group, in a phase with calls: the turns the group's
	// request loops had, and those that passed with no live session to call on (v2).
	Turns        map[string]int64 `json:"turns,omitempty"`
	CallsNotMade map[string]int64 `json:"calls_not_made,omitempty"`
	// CallsNotStarted counts, per group, the turns of CallsNotMade that came before their
	// client's first session was live: the clients started late (v2).
	CallsNotStarted map[string]int64 `json:"calls_not_started,omitempty"`
}
