package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// groupStatus is one progress row: a client group's sessions by state and its errors now. It
// is also the line a shard process writes with --progress json, for the parent of a --procs
// run to add up.
type groupStatus struct {
	Name                string           `json:"name"`
	Live                int              `json:"live"`
	Reconnecting        int              `json:"reconnecting"`
	BelievedLiveButDead int              `json:"believed_live_but_dead"`
	DeadDetected        int64            `json:"dead_detected"`
	Misattributed       int64            `json:"misattributed"`
	Errors              map[string]int64 `json:"errors,omitempty"`
}

func (g *groupStatus) add(o groupStatus) {
	g.Live += o.Live
	g.Reconnecting += o.Reconnecting
	g.BelievedLiveButDead += o.BelievedLiveButDead
	g.DeadDetected += o.DeadDetected
	g.Misattributed += o.Misattributed
	for k, n := range o.Errors {
		if g.Errors == nil {
			g.Errors = map[string]int64{}
		}
		g.Errors[k] += n
	}
}

func (g *groupStatus) line() string {
	return fmt.Sprintf("%-10s live %d  reconnecting %d  believed-live-but-dead %d  dead-detected %d  misattributed %d  errors %s",
		g.Name, g.Live, g.Reconnecting, g.BelievedLiveButDead, g.DeadDetected, g.Misattributed, errorLine(g.Errors))
}

func errorLine(errs map[string]int64) string {
	var parts []string
	for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
		if n := errs[k.String()]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", k, n))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " ")
}

// statusSource reports every group's status now. It is called from a ticker, never from the
// workers: they only bump atomics, which it reads, and it walks the fleets.
type statusSource func() []groupStatus

// startProgress shows live progress until the returned function is called. On a terminal it
// draws mpb rows; elsewhere (CI logs) it prints a plain line about every 10 s, because mpb
// renders nothing useful off a terminal; "json" writes one status line a second for a parent
// process to read.
func startProgress(mode string, out io.Writer, start time.Time, planned time.Duration, src statusSource) (stop func()) {
	switch mode {
	case "off":
		return func() {}
	case "json":
		return ticking(time.Second, func() {
			b, _ := json.Marshal(src())
			fmt.Fprintf(out, "%s%s\n", statusPrefix, b)
		})
	}
	tty := false
	if f, ok := out.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	if mode == "bars" || (mode == "auto" && tty) {
		return barProgress(out, start, planned, src)
	}
	return ticking(10*time.Second, func() {
		fmt.Fprintf(out, "[%s / %s]\n", time.Since(start).Truncate(time.Second), planned)
		for _, g := range src() {
			fmt.Fprintf(out, "  %s\n", g.line())
		}
	})
}

// statusPrefix marks a --progress json line among a shard's other output.
const statusPrefix = "mcpchaos-status "

func barProgress(out io.Writer, start time.Time, planned time.Duration, src statusSource) func() {
	var latest atomic.Pointer[[]groupStatus]
	first := src()
	latest.Store(&first)
	p := mpb.New(mpb.WithOutput(out), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond))
	total := max(planned.Milliseconds(), 1)
	clock := p.New(total, mpb.BarStyle(),
		mpb.PrependDecorators(decor.Name("elapsed ", decor.WC{W: 10})),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
			return fmt.Sprintf("%s / %s", time.Since(start).Truncate(100*time.Millisecond), planned)
		})))
	for i := range first {
		p.New(0, mpb.NopStyle(), mpb.PrependDecorators(decor.Any(func(decor.Statistics) string {
			if gs := *latest.Load(); i < len(gs) {
				return gs[i].line()
			}
			return ""
		})))
	}
	stopTicks := ticking(500*time.Millisecond, func() {
		s := src()
		latest.Store(&s)
		clock.SetCurrent(min(time.Since(start).Milliseconds(), total))
	})
	return func() {
		stopTicks()
		s := src()
		latest.Store(&s)
		p.Shutdown()
	}
}

// ticking calls fn every period in a goroutine of its own until the returned function is
// called; that function returns once the goroutine has ended.
func ticking(period time.Duration, fn func()) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer guard.Catch(context.Background(), "progress") // outside the run: reported, the display stops
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fn()
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
