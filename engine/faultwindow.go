package engine

import (
	"slices"
	"time"
)

// during names the faults in force at some moment of the window (from, to], both since the
// run's start, in the order they were applied: a live view that samples once a second still
// shows a fault shorter than its tick in the line that covers it.
func (l *faultLog) during(from, to time.Duration) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, f := range l.faults {
		if f.err != nil || f.added > to || (f.removed != 0 && f.removed <= from) {
			continue
		}
		if !slices.Contains(out, f.fault) {
			out = append(out, f.fault)
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
