package engine

import (
	"slices"
	"time"
)

// faultsDuring names the faults in force at some moment of the window (from, to], both since
// the run's start, in the order they were applied: a live view that samples once a second
// still shows a fault shorter than its tick in the line that covers it.
func (r *runner) faultsDuring(from, to time.Duration) []string {
	r.faultMu.Lock()
	defer r.faultMu.Unlock()
	fromS, toS := from.Seconds(), to.Seconds()
	var out []string
	for _, f := range r.faultLog {
		if f.Error != "" || f.AddedAtS > toS || (f.RemovedAtS != 0 && f.RemovedAtS <= fromS) {
			continue
		}
		if !slices.Contains(out, f.Fault) {
			out = append(out, f.Fault)
		}
	}
	return out
}

// FaultsDuring names the faults in force at some moment between from (exclusive) and to on
// some group's proxy: Faults over a window rather than an instant.
func (v *View) FaultsDuring(from, to time.Time) []string {
	if v.faultsDuring == nil {
		return nil
	}
	return v.faultsDuring(from.Sub(v.Start), to.Sub(v.Start))
}
