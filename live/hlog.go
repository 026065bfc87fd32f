package live

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/results/hlog"
)

// HistLogs streams an HdrHistogram interval log per histogram (package hlog), one interval a
// second, into a directory of its own inside Parent while the run goes on (hlog.Live); Finish
// moves them into place once the export is written. A write error stops the logging, said
// once on Stderr; the run goes on.
type HistLogs struct {
	Parent string // the directory the final one will be in (the live logs are renamed into place)
	Stderr io.Writer

	live *hlog.Live
	err  error // the first write error
}

func (o *HistLogs) Start(v *engine.View) error {
	live, err := hlog.StartLive(o.Parent, v.Recorders(), v.Start, v.RunID)
	if err != nil {
		return fmt.Errorf("--hlog: %w", err)
	}
	o.live = live
	return nil
}

func (o *HistLogs) Every() time.Duration { return time.Second }

func (o *HistLogs) Observe(_ *engine.View, now time.Time) { o.note(o.live.Interval(now)) }

func (o *HistLogs) note(err error) {
	if err != nil && o.err == nil {
		o.err = err
		fmt.Fprintf(o.Stderr, "warning: --hlog: %v; the interval logs stop here\n", err)
	}
}

// Stop writes the last interval, up to the run's end, and closes the files.
func (o *HistLogs) Stop(_ *engine.View, end time.Time) {
	if o.live != nil {
		o.note(o.live.Close(end))
	}
}

// Finish puts the logs in dir (replacing the directory whole) and returns the directory
// written; nothing when they could not be written. A nil HistLogs has nothing to finish.
func (o *HistLogs) Finish(dir string) (string, error) {
	if o == nil || o.live == nil {
		return "", nil
	}
	if o.err != nil {
		o.Cleanup()
		return "", nil // said when it happened
	}
	err := o.live.Finish(dir)
	o.live = nil
	if err != nil {
		return "", err
	}
	return dir + string(filepath.Separator), nil
}

// Cleanup removes the live logs (a run that ends before its export leaves none behind).
func (o *HistLogs) Cleanup() {
	if o == nil || o.live == nil {
		return
	}
	if err := o.live.Remove(); err != nil {
		fmt.Fprintf(o.Stderr, "warning: --hlog: %v\n", err)
	}
	o.live = nil
}
