package main

import (
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

	"github.com/mcpchaos/mcpchaos/clients"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// groupView is what one progress row shows, refreshed by a ticker: workers never touch the
// progress display; the ticker reads their atomics and walks the fleet.
type groupView struct {
	name   string
	census atomic.Pointer[clients.Census]
	rec    *metrics.Group
	fleet  *clients.Fleet
}

func (v *groupView) refresh() {
	c := v.fleet.Census()
	v.census.Store(&c)
}

func (v *groupView) line() string {
	c := v.census.Load()
	if c == nil {
		c = &clients.Census{}
	}
	return fmt.Sprintf("%-10s live %d  reconnecting %d  believed-live-but-dead %d  dead-detected %d  misattributed %d  errors %s",
		v.name, c.Live, c.Reconnecting+c.Reinit, c.BelievedLiveButDead,
		v.rec.Get(metrics.SessionsDeadDetected), v.rec.Get(metrics.MisattributedErrors), errorLine(v.rec))
}

func errorLine(rec *metrics.Group) string {
	var parts []string
	for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
		if n := rec.Errors(k); n > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", k, n))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " ")
}

// startProgress shows live progress until the returned function is called. On a terminal it
// draws mpb rows; elsewhere (CI logs) it prints a plain line about every 10 s, because mpb
// renders nothing useful off a terminal.
func startProgress(mode string, out io.Writer, start time.Time, planned time.Duration, fleets []*clients.Fleet, recs []*metrics.Group) (stop func()) {
	if mode == "off" {
		return func() {}
	}
	views := make([]*groupView, len(fleets))
	for i, f := range fleets {
		views[i] = &groupView{name: recs[i].Name, rec: recs[i], fleet: f}
	}
	tty := false
	if f, ok := out.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	if mode == "bars" || (mode == "auto" && tty) {
		return barProgress(out, start, planned, views)
	}
	return lineProgress(out, start, planned, views, 10*time.Second)
}

func barProgress(out io.Writer, start time.Time, planned time.Duration, views []*groupView) func() {
	p := mpb.New(mpb.WithOutput(out), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond))
	total := max(planned.Milliseconds(), 1)
	clock := p.New(total, mpb.BarStyle(),
		mpb.PrependDecorators(decor.Name("elapsed ", decor.WC{W: 10})),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
			return fmt.Sprintf("%s / %s", time.Since(start).Truncate(100*time.Millisecond), planned)
		})))
	for _, v := range views {
		p.New(0, mpb.NopStyle(), mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return v.line() })))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			for _, v := range views {
				v.refresh()
			}
			clock.SetCurrent(min(time.Since(start).Milliseconds(), total))
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		for _, v := range views {
			v.refresh()
		}
		p.Shutdown()
	}
}

func lineProgress(out io.Writer, start time.Time, planned time.Duration, views []*groupView, every time.Duration) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			fmt.Fprintf(out, "[%s / %s]\n", time.Since(start).Truncate(time.Second), planned)
			for _, v := range views {
				v.refresh()
				fmt.Fprintf(out, "  %s\n", v.line())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
