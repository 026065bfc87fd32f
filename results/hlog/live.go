package hlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/outfile"
)

// Live is a run's interval logs while the run goes on: one file per histogram, streamed into
// a directory of their own beside their final place (so that a run that dies leaves no half
// set where the logs belong); Finish moves them into place whole, Remove takes them away.
type Live struct {
	dir   string // the live directory; "" once removed
	files []*os.File
	w     *Writer
}

// StartLive makes the live directory under parent (made if missing) and a Writer over one
// file per histogram of recs.
func StartLive(parent string, recs []*metrics.Recorder, start time.Time, runID string) (*Live, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, ".hlog.live-*")
	if err != nil {
		return nil, err
	}
	l := &Live{dir: dir}
	outs := make([]io.Writer, 0, len(metrics.Hists()))
	for _, h := range metrics.Hists() {
		f, err := os.OpenFile(filepath.Join(dir, h.String()+".hlog"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, errors.Join(err, l.Remove())
		}
		l.files = append(l.files, f)
		outs = append(outs, f)
	}
	if l.w, err = NewWriter(outs, recs, start, runID); err != nil {
		return nil, errors.Join(err, l.Remove())
	}
	return l, nil
}

// Interval writes one interval, up to now (Writer.Interval).
func (l *Live) Interval(now time.Time) error { return l.w.Interval(now) }

// Close writes the last interval, up to the run's end, and closes the files.
func (l *Live) Close(end time.Time) error {
	errs := []error{l.w.Close(end)}
	for _, f := range l.files {
		errs = append(errs, f.Close())
	}
	l.files = nil
	return errors.Join(errs...)
}

// Finish puts the closed logs in dir, replacing it whole, and removes the live directory.
func (l *Live) Finish(dir string) error {
	err := outfile.ReplaceDir(dir, ".hlog", func(tmp string) error {
		for _, h := range metrics.Hists() {
			name := h.String() + ".hlog"
			if err := os.Rename(filepath.Join(l.dir, name), filepath.Join(tmp, name)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		err = fmt.Errorf("writing the interval logs to %s: %w", dir, err)
	}
	return errors.Join(err, l.Remove())
}

// Remove removes the live directory and what is left of its files, by their exact names; a
// second call does nothing.
func (l *Live) Remove() error {
	if l == nil || l.dir == "" {
		return nil
	}
	for _, f := range l.files {
		f.Close()
	}
	l.files = nil
	var errs []error
	for _, h := range metrics.Hists() {
		if err := os.Remove(filepath.Join(l.dir, h.String()+".hlog")); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, os.Remove(l.dir))
	l.dir = ""
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cleaning up the live interval logs: %w", err)
	}
	return nil
}
