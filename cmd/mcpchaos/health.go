package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// health watches, while a run goes on, the parts it depends on but does not own: a target given
// by URL (a TCP connection straight to it, not through a proxy, so no fault decides it) and an
// external toxiproxy-server (it answers and still has the run's proxies). What it saw becomes
// the run's problems (run.error, run.notes, the lines under the summary).
type health struct {
	start    time.Time
	recs     []*metrics.Group
	dialAddr string           // a URL target's host:port; "" for the reference server
	ext      *faults.External // nil with embedded Toxiproxy

	mu       sync.Mutex
	episodes []outage // the target's, in order; the last may still be going on
	tpLost   *outage  // the toxiproxy-server's loss (it is not taken back)
}

type outage struct {
	from, to time.Duration // to 0: still going on
	errsAt   int64         // the fleet's error count when it began
	errs     int64         // errors during it
	why      string
}

func (h *health) errors() int64 {
	var n int64
	for _, r := range h.recs {
		s := r.Snapshot()
		for _, e := range s.Errors {
			n += e
		}
	}
	return n
}

func (h *health) run(ctx context.Context, period time.Duration) {
	defer guard.Catch("health watcher")
	if h.dialAddr == "" && h.ext == nil {
		return
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			h.settle()
			return
		case <-t.C:
			h.check(min(period, time.Second))
		}
	}
}

func (h *health) check(timeout time.Duration) {
	el := time.Since(h.start)
	if h.dialAddr != "" {
		c, err := net.DialTimeout("tcp", h.dialAddr, timeout)
		if c != nil {
			c.Close()
		}
		h.mu.Lock()
		var cur *outage
		if n := len(h.episodes); n > 0 && h.episodes[n-1].to == 0 {
			cur = &h.episodes[n-1]
		}
		switch {
		case err != nil && cur == nil:
			h.episodes = append(h.episodes, outage{from: el, errsAt: h.errors(), why: err.Error()})
		case err == nil && cur != nil:
			cur.to, cur.errs = el, h.errors()-cur.errsAt
		}
		h.mu.Unlock()
	}
	if h.ext != nil {
		done := make(chan error, 1)
		go func() { done <- h.ext.Alive() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(2 * time.Second):
			err = fmt.Errorf("the toxiproxy-server did not answer within 2s")
		}
		if err != nil && err != faults.ErrClosed {
			h.mu.Lock()
			if h.tpLost == nil {
				h.tpLost = &outage{from: el, errsAt: h.errors(), why: err.Error()}
			}
			h.mu.Unlock()
		}
	}
}

// settle counts the errors of what is still going on at the end.
func (h *health) settle() {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.errors()
	if k := len(h.episodes); k > 0 && h.episodes[k-1].to == 0 {
		h.episodes[k-1].errs = n - h.episodes[k-1].errsAt
	}
	if h.tpLost != nil {
		h.tpLost.errs = n - h.tpLost.errsAt
	}
}

// problems says what went wrong, each in a line; fatal when the run could not measure what it
// was asked to (the target gone until the end, the toxiproxy-server lost).
func (h *health) problems() (lines []string, fatal bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range h.episodes {
		if o.to == 0 {
			lines = append(lines, fmt.Sprintf("target unreachable from %.1fs to the end: %d errors (%s)", o.from.Seconds(), o.errs, o.why))
			fatal = true
			continue
		}
		lines = append(lines, fmt.Sprintf("target unreachable from %.1fs to %.1fs: %d errors (%s)", o.from.Seconds(), o.to.Seconds(), o.errs, o.why))
	}
	if o := h.tpLost; o != nil {
		lines = append(lines, fmt.Sprintf("toxiproxy-server lost at %.1fs: faults after that not applied, clients cut off from the target; %d errors since (%s)", o.from.Seconds(), o.errs, o.why))
		fatal = true
	}
	return lines, fatal
}
