package main

import (
	"net"
	"strings"
	"testing"
	"time"
)

// A target that goes away and comes back is a note (the run goes on, exit 0); one that goes
// away until the end is fatal. The watcher's checks are called directly: no waiting.
func TestHealthTargetOutages(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	h := &health{start: time.Now(), dialAddr: addr}
	h.check(time.Second)
	if lines, fatal := h.problems(); len(lines) != 0 || fatal {
		t.Fatalf("a reachable target: %q, fatal %v", lines, fatal)
	}
	ln.Close()
	h.check(time.Second)
	if ln, err = net.Listen("tcp", addr); err != nil {
		t.Skipf("could not listen on %s again: %v", addr, err)
	}
	h.check(time.Second)
	lines, fatal := h.problems()
	if len(lines) != 1 || fatal || !strings.Contains(lines[0], "target unreachable from") || strings.Contains(lines[0], "to the end") {
		t.Fatalf("a target that came back: %q, fatal %v", lines, fatal)
	}
	ln.Close()
	h.check(time.Second)
	h.settle()
	lines, fatal = h.problems()
	if len(lines) != 2 || !fatal || !strings.Contains(lines[1], "to the end") {
		t.Fatalf("a target gone until the end: %q, fatal %v", lines, fatal)
	}
}
