package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Health watcher tuning. The watcher must never report the tool's own slowness as the
// target's outage: a dial gets healthDialTimeout (not a fraction of a second), an outage
// begins only after healthFailures failed checks in a row, and a check made by a watcher
// whose tick came late (the process starved of CPU, so the dial's failure says more about
// this process than about the target) counts neither way.
const (
	healthDialTimeout = 2 * time.Second
	healthFailures    = 3
)

// health watches, while a run goes on, the parts it depends on but does not own: a target given
// by URL (a TCP connection straight to it, not through a proxy, so no fault decides it) and an
// external toxiproxy-server (it answers and still has the run's proxies). What it saw becomes
// the run's problems (run.error, run.notes).
type health struct {
	start    time.Time
	recs     []*metrics.Recorder
	dialAddr string           // a URL target's host:port; "" for the reference server
	ext      *faults.External // nil with embedded Toxiproxy
	dial     func(addr string, timeout time.Duration) error

	mu       sync.Mutex
	failed   int // checks failed in a row
	firstAt  time.Duration
	firstWhy string
	episodes []outage // the target's, in order; the last may still be going on
	tpLost   *outage  // the toxiproxy-server's loss (it is not taken back)
}

type outage struct {
	from, to time.Duration // to 0: still going on
	errsAt   int64         // the fleet's error count when it began
	errs     int64         // errors during it
	why      string
}

func dialTCP(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if c != nil {
		c.Close()
	}
	return err
}

func (h *health) errors() int64 {
	var n int64
	for _, r := range h.recs {
		for _, e := range r.Snapshot().Errors {
			n += e
		}
	}
	return n
}

func (h *health) run(ctx context.Context, period time.Duration) {
	defer guard.Catch(ctx, "health watcher")
	if h.dialAddr == "" && h.ext == nil {
		return
	}
	t := time.NewTicker(period)
	defer t.Stop()
	due := time.Now().Add(period)
	for {
		select {
		case <-ctx.Done():
			h.settle()
			return
		case <-t.C:
			h.check(ctx, due, period)
			due = time.Now().Add(period)
		}
	}
}

// check makes one round of checks, which was due at due: a round that starts more than a
// period late, or whose dial took far longer than its own timeout, was made by a starved
// process and counts neither way.
func (h *health) check(ctx context.Context, due time.Time, period time.Duration) {
	began := time.Now()
	late := began.Sub(due) > period
	if h.dialAddr != "" {
		err := h.dial(h.dialAddr, healthDialTimeout)
		if time.Since(began) > 2*healthDialTimeout {
			late = true
		}
		h.noteDial(began.Sub(h.start), err, late)
	}
	if h.ext != nil {
		h.checkToxiproxy(ctx, began.Sub(h.start))
	}
}

// noteDial records one dial's outcome at el since the start; late: the watcher was starved.
func (h *health) noteDial(el time.Duration, err error, late bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var cur *outage
	if n := len(h.episodes); n > 0 && h.episodes[n-1].to == 0 {
		cur = &h.episodes[n-1]
	}
	switch {
	case err == nil:
		h.failed = 0
		if cur != nil {
			cur.to, cur.errs = el, h.errors()-cur.errsAt
		}
	case late || cur != nil:
		// a starved watcher's failure proves nothing; an outage already going on goes on
	default:
		h.failed++
		if h.failed == 1 {
			h.firstAt, h.firstWhy = el, err.Error()
		}
		if h.failed >= healthFailures {
			h.episodes = append(h.episodes, outage{from: h.firstAt, errsAt: h.errors(), why: h.firstWhy})
		}
	}
}

func (h *health) checkToxiproxy(ctx context.Context, el time.Duration) {
	done := make(chan error, 1)
	go func() {
		defer guard.Catch(ctx, "health watcher")
		done <- h.ext.Alive()
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Second):
		err = fmt.Errorf("the toxiproxy-server did not answer within 2s")
	}
	if err != nil && !errors.Is(err, faults.ErrClosed) {
		h.mu.Lock()
		if h.tpLost == nil {
			h.tpLost = &outage{from: el, errsAt: h.errors(), why: err.Error()}
		}
		h.mu.Unlock()
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
