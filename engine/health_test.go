package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A target that goes away and comes back is a note (the run goes on); one that goes away until
// the end is fatal. An outage needs several failed checks in a row, and dates from the first.
// The watcher's outcomes are fed directly: no waiting, no real clock.
func TestHealthTargetOutages(t *testing.T) {
	h := &health{}
	down := errors.New("connection refused")
	at := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	h.noteDial(at(1), nil, false)
	if lines, fatal := h.problems(); len(lines) != 0 || fatal {
		t.Fatalf("a reachable target: %q, fatal %v", lines, fatal)
	}
	for i := range healthFailures - 1 {
		h.noteDial(at(2+float64(i)), down, false)
	}
	h.noteDial(at(5), nil, false)
	if lines, _ := h.problems(); len(lines) != 0 {
		t.Fatalf("%d failed checks, then a good one: %q, want no outage", healthFailures-1, lines)
	}
	for i := range healthFailures {
		h.noteDial(at(6+float64(i)), down, false)
	}
	h.noteDial(at(10), nil, false)
	lines, fatal := h.problems()
	if len(lines) != 1 || fatal || !strings.Contains(lines[0], "target unreachable from 6.0s to 10.0s") {
		t.Fatalf("a target that came back: %q, fatal %v", lines, fatal)
	}
	for i := range healthFailures + 2 {
		h.noteDial(at(11+float64(i)), down, false)
	}
	h.settle()
	lines, fatal = h.problems()
	if len(lines) != 2 || !fatal || !strings.Contains(lines[1], "from 11.0s to the end") {
		t.Fatalf("a target gone until the end: %q, fatal %v", lines, fatal)
	}
}

// The tool's own slowness is not the target's outage (issue 10, item 7): checks made by a
// watcher whose tick came late (the process starved) count neither way, however many.
func TestHealthStarvedWatcherInventsNoOutage(t *testing.T) {
	dials := 0
	h := &health{start: time.Now(), dialAddr: "127.0.0.1:1", dial: func(string, time.Duration) error {
		dials++
		return errors.New("i/o timeout")
	}}
	period := 500 * time.Millisecond
	for range 10 * healthFailures {
		h.check(context.Background(), time.Now().Add(-10*period), period) // due ten periods ago
	}
	if dials == 0 {
		t.Fatal("the watcher did not dial")
	}
	if lines, fatal := h.problems(); len(lines) != 0 || fatal {
		t.Fatalf("a starved watcher reported %q, fatal %v", lines, fatal)
	}
	// On time (due in the future, so never late), the same failures are an outage.
	for range healthFailures {
		h.check(context.Background(), time.Now().Add(time.Hour), period)
	}
	if lines, fatal := h.problems(); len(lines) != 1 || !fatal || !strings.Contains(lines[0], "to the end") {
		t.Fatalf("failures on time: %q, fatal %v, want an outage to the end", lines, fatal)
	}
}
