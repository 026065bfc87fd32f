package engine

import (
	"slices"
	"testing"
	"time"
)

// A fault shorter than a progress tick is in force during the window that covers it, and
// only there; a fault that failed to apply never is.
func TestFaultsDuring(t *testing.T) {
	r := &runner{}
	r.noteFault(faultChange("blip", "naive", true, 1200*time.Millisecond)) // 300 ms, between ticks
	r.noteFault(faultChange("blip", "naive", false, 1500*time.Millisecond))
	r.noteFault(faultChange("outage", "probe", true, 1800*time.Millisecond))
	for _, c := range []struct {
		from, to time.Duration
		want     []string
	}{
		{0, time.Second, nil},
		{time.Second, 2 * time.Second, []string{"blip", "outage"}},
		{1500 * time.Millisecond, 2 * time.Second, []string{"outage"}}, // removed at the window's start
		{2 * time.Second, 3 * time.Second, []string{"outage"}},         // not yet removed
		{1200 * time.Millisecond, 1300 * time.Millisecond, []string{"blip"}},
	} {
		if got := r.log.during(c.from, c.to); !slices.Equal(got, c.want) {
			t.Errorf("(%v, %v]: %v, want %v", c.from, c.to, got, c.want)
		}
	}
	if fs := r.log.inForce(); !slices.Equal(fs, []string{"outage"}) {
		t.Errorf("in force now: %v", fs)
	}
}
