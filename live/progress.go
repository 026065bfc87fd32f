package live

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/generator"
	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/shards"
)

// groupStatus is one progress row: a client group's sessions by state and its errors now. It
// is also the part of the line a shard process writes with --progress json that the parent
// of a --procs run adds up (package shards).
type groupStatus = shards.GroupStatus

// rowWidth is the width a progress row must fit: an 80-column terminal.
const rowWidth = 80

// line is the group's row, at most rowWidth columns, its name padded to nameWidth (at most 8):
// every figure, large counts shortened (123k, 1.23M), then the errors by kind when they all
// fit (their total always shows).
//
//	naive live 25 rec 0 false-live 25 det 0 misattr 50 err 175 connect:125 reset:50
func statusRow(g *groupStatus, nameWidth int) string {
	nameWidth = min(nameWidth, 8)
	name := g.Name
	if utf8.RuneCountInString(name) > nameWidth {
		name = string([]rune(name)[:nameWidth-1]) + "…"
	}
	var total int64
	for _, n := range g.Errors {
		total += n
	}
	falseLive := short(int64(g.BelievedLiveButDead))
	switch g.Withheld {
	case "":
	case results.NotApplicable:
		falseLive = "n/a"
	case results.EstimateRefuted:
		falseLive = "refuted" // the estimate of deaths it counts from was refuted
	default:
		falseLive = "withheld" // nothing the server answers can check the estimate (results.ServesAnyID)
	}
	s := fmt.Sprintf("%-*s live %s rec %s false-live %s det %s misattr %s err %s", nameWidth, name,
		short(int64(g.Live)), short(int64(g.Reconnecting)), falseLive,
		short(g.DeadDetected), short(g.Misattributed), short(total))
	kinds := ""
	for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
		if n := g.Errors[k.String()]; n > 0 {
			kinds += fmt.Sprintf(" %s:%s", k, short(n))
		}
	}
	if utf8.RuneCountInString(s)+utf8.RuneCountInString(kinds) <= rowWidth {
		s += kinds
	}
	return s
}

// short writes a count in at most 5 characters: 12345, 123k, 1.23M.
func short(n int64) string {
	switch {
	case n < 100_000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatInt(n/1000, 10) + "k"
	case n < 1_000_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 2, 64) + "M"
	}
	return strconv.FormatFloat(float64(n)/1e9, 'f', 2, 64) + "G"
}

// lines are the rows of every group, names padded alike.
func lines(gs []groupStatus) []string {
	w := 1
	for _, g := range gs {
		w = max(w, utf8.RuneCountInString(g.Name))
	}
	out := make([]string, len(gs))
	for i := range gs {
		out[i] = statusRow(&gs[i], w)
	}
	return out
}

// progressLegend explains the rows' short words once, above them.
const progressLegend = "rec: reconnecting or re-initializing; false-live: believed live, in truth dead;\n" +
	"(n/a: no sessions; refuted: sessions outlived their estimated death, so no count);\n" +
	"det: deaths detected as such; misattr: misattributed errors; err: transport errors"

// clockLine is the run's clock: elapsed of planned, or the wait before a --start-at.
func clockLine(start time.Time, planned time.Duration, round time.Duration) string {
	el := time.Since(start)
	if el < 0 {
		return fmt.Sprintf("starts in %s (planned %s)", (-el).Round(round), planned)
	}
	return fmt.Sprintf("%s / %s", el.Truncate(round), planned)
}

// RunSource reports the phase in force at now and the faults in force at some moment since
// from (from == now: at now); "" and none when not known.
type RunSource func(from, now time.Time) (phase string, faults []string)

// runLine is the progress view's line of the run as a whole: the phase and the faults in force.
func runLine(run RunSource, now time.Time) string {
	if run == nil {
		return ""
	}
	phase, fs := run(now, now)
	if phase == "" {
		phase = "-"
	}
	f := "none"
	if len(fs) > 0 {
		f = strings.Join(fs, ", ")
	}
	s := "phase " + phase + "  faults in force: " + f
	if utf8.RuneCountInString(s) > rowWidth {
		s = string([]rune(s)[:rowWidth-1]) + "…"
	}
	return s
}

// StatusSource reports every group's status now. It is called from a ticker, never from the
// workers: they only bump atomics, which it reads, and it walks the fleets.
type StatusSource func() []groupStatus

// StartProgress shows live progress until the returned function is called. On a terminal it
// draws mpb rows; elsewhere (CI logs) it prints a plain line about every 10 s, because mpb
// renders nothing useful off a terminal; "json" writes one status line a second for a parent
// process to read.
// gen, when not nil, reads the load generator's last window for the json line.
func StartProgress(mode string, out io.Writer, start time.Time, planned time.Duration, src StatusSource, run RunSource, gen func() generator.Live) (stop func()) {
	switch mode {
	case "off":
		return func() {}
	case "json":
		prev := time.Now()
		return ticking(time.Second, func() {
			now := time.Now()
			st := shards.Status{Time: now.UTC(), ElapsedS: now.Sub(start).Seconds(), Groups: src()}
			if run != nil {
				st.Phase, st.Faults = run(prev, now) // a fault shorter than a tick is in the line covering it
			}
			prev = now
			if gen != nil {
				if l := gen(); l.AtS > 0 {
					st.Generator = &l
				}
			}
			b, _ := json.Marshal(st)
			fmt.Fprintf(out, "%s\n", b)
		})
	}
	tty := false
	if f, ok := out.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	if mode == "bars" && !tty {
		fmt.Fprintln(out, "progress: --progress bars needs a terminal and stderr is not one; printing a status line every 10s instead")
	}
	if tty && (mode == "bars" || mode == "auto") {
		return barProgress(out, start, planned, src, run)
	}
	fmt.Fprintln(out, progressLegend)
	return ticking(10*time.Second, func() {
		fmt.Fprintf(out, "[%s]\n", clockLine(start, planned, time.Second))
		if l := runLine(run, time.Now()); l != "" {
			fmt.Fprintf(out, "  %s\n", l)
		}
		for _, l := range lines(src()) {
			fmt.Fprintf(out, "  %s\n", l)
		}
	})
}

func barProgress(out io.Writer, start time.Time, planned time.Duration, src StatusSource, run RunSource) func() {
	var latest atomic.Pointer[[]groupStatus]
	first := src()
	latest.Store(&first)
	fmt.Fprintln(out, progressLegend)
	p := mpb.New(mpb.WithOutput(out), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond))
	total := max(planned.Milliseconds(), 1)
	clock := p.New(total, mpb.BarStyle(),
		mpb.PrependDecorators(decor.Name("elapsed ", decor.WC{W: 10})),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
			return clockLine(start, planned, 100*time.Millisecond)
		})))
	if run != nil {
		p.New(0, mpb.NopStyle(), mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return runLine(run, time.Now()) })))
	}
	for i := range first {
		p.New(0, mpb.NopStyle(), mpb.PrependDecorators(decor.Any(func(decor.Statistics) string {
			if ls := lines(*latest.Load()); i < len(ls) {
				return ls[i]
			}
			return ""
		})))
	}
	stopTicks := ticking(500*time.Millisecond, func() {
		s := src()
		latest.Store(&s)
		clock.SetCurrent(max(min(time.Since(start).Milliseconds(), total), 0))
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

// Progress is the observer that shows a run's progress (StartProgress) from its start to its
// end: Mode is --progress's (auto, bars, lines, json, off), Out where it is drawn (stderr).
type Progress struct {
	Mode string
	Out  io.Writer

	mu    sync.Mutex
	timer *time.Timer
	stop  func()
	done  bool
}

// Start shows progress from the run's start: with a start time ahead, nothing is shown while
// the run waits for it.
func (p *Progress) Start(v *engine.View) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = time.AfterFunc(time.Until(v.Start), func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.done {
			p.stop = StartProgress(p.Mode, p.Out, v.Start, v.Planned, viewStatus(v), func(from, now time.Time) (string, []string) {
				return v.Phase(now), v.FaultsDuring(from, now)
			}, v.Generator)
		}
	})
	return nil
}

func (p *Progress) Stop(*engine.View, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	p.timer.Stop()
	if p.stop != nil {
		p.stop()
	}
}

// viewStatus reads every group's progress row from the run's view. It is called from a
// ticker, never from the workers: they only bump atomics, which it reads.
func viewStatus(v *engine.View) StatusSource {
	return func() []groupStatus {
		gs := v.Groups()
		out := make([]groupStatus, len(gs))
		for i, g := range gs {
			c, rec := g.Census, g.Recorder
			s := groupStatus{
				Name: g.Name, Live: c.Live, Reconnecting: c.Reconnecting + c.Reinit,
				BelievedLiveButDead: c.BelievedLiveButDead,
				DeadDetected:        rec.Get(metrics.SessionsDeadDetected),
				Misattributed:       rec.Get(metrics.MisattributedErrors),
				Withheld:            g.Withheld,
			}
			for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
				if n := rec.Errors(k); n > 0 {
					if s.Errors == nil {
						s.Errors = map[string]int64{}
					}
					s.Errors[k.String()] = n
				}
			}
			out[i] = s
		}
		return out
	}
}
