package faults

import (
	"sync"
	"testing"
	"time"
)

// stallMeter tells a process that was starved from a call that something held: a control
// timer fires every stallTick, and each time it fires late, the lateness is a stretch of time
// in which this process ran none of its timers (the schedule's own timer and Toxiproxy's calls
// were as stalled as it). A change that came late by more than the stalls between its plan
// and its end was held by something else (a toxic chain waiting on a stream).
type stallMeter struct {
	start time.Time
	stop  chan struct{}
	done  sync.WaitGroup
	mu    sync.Mutex
	late  []span // from start
}

type span struct{ from, to time.Duration }

const stallTick = 5 * time.Millisecond

func meterStalls(t *testing.T, start time.Time) *stallMeter {
	m := &stallMeter{start: start, stop: make(chan struct{})}
	m.done.Go(func() {
		tm := time.NewTimer(stallTick)
		defer tm.Stop()
		due := time.Now().Add(stallTick)
		for {
			select {
			case <-m.stop:
				return
			case <-tm.C:
			}
			now := time.Now()
			if late := now.Sub(due); late > time.Millisecond {
				m.mu.Lock()
				m.late = append(m.late, span{due.Sub(m.start), now.Sub(m.start)})
				m.mu.Unlock()
			}
			due = now.Add(stallTick)
			tm.Reset(stallTick)
		}
	})
	t.Cleanup(m.end)
	return m
}

func (m *stallMeter) end() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	m.done.Wait()
}

// stalled is how long, between from and to (from the start), the control timer was late.
func (m *stallMeter) stalled(from, to time.Duration) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return overlap(m.late, from, to)
}

func overlap(spans []span, from, to time.Duration) time.Duration {
	var sum time.Duration
	for _, s := range spans {
		if a, b := max(s.from, from), min(s.to, to); b > a {
			sum += b - a
		}
	}
	return sum
}

// The meter's arithmetic: only the part of a stall inside the window counts.
func TestStallOverlap(t *testing.T) {
	ms := time.Millisecond
	spans := []span{{0, 10 * ms}, {100 * ms, 400 * ms}, {900 * ms, 950 * ms}}
	for _, c := range []struct{ from, to, want time.Duration }{
		{0, 1000 * ms, 360 * ms},
		{200 * ms, 300 * ms, 100 * ms},
		{50 * ms, 90 * ms, 0},
		{350 * ms, 920 * ms, 70 * ms},
	} {
		if got := overlap(spans, c.from, c.to); got != c.want {
			t.Errorf("overlap(%v, %v) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

// A stall meter beside a process that is not starved sees next to no stall, and one beside a
// call held by something else (a goroutine waiting, the process idle) does not excuse it.
func TestStallMeterDoesNotExcuseAHeldCall(t *testing.T) {
	start := time.Now()
	m := meterStalls(t, start)
	held := make(chan struct{})
	time.AfterFunc(300*time.Millisecond, func() { close(held) })
	<-held // a call that something else held for 300 ms
	end := time.Since(start)
	m.end()
	if s := m.stalled(0, end); s > end/2 {
		t.Skipf("inconclusive: the process itself was starved %v of %v", s, end)
	} else if end-s < 150*time.Millisecond {
		t.Errorf("a wait of %v held by a timer was excused as %v of starvation", end, s)
	}
}
