package hlog

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// RunIDComment starts the comment line that names the run a log belongs to: a reader can
// refuse the log of another run left beside an export.
const RunIDComment = "[mcpchaos run_id: "

// Writer writes the interval logs of a run's recorders, one log per histogram.
type Writer struct {
	recs  []*metrics.Recorder
	ws    []*bufio.Writer
	logs  []*hdrhistogram.HistogramLogWriter
	prev  [][]*hdrhistogram.Histogram // per group, per histogram: the cumulative one at the last tick
	last  time.Time
	start time.Time
	err   error
}

// NewWriter starts the logs of recs, one io.Writer per histogram in metrics.Hists() order,
// with their headers: the format version, the run's start and id, and the legend.
func NewWriter(outs []io.Writer, recs []*metrics.Recorder, start time.Time, runID string) (*Writer, error) {
	hs := metrics.Hists()
	if len(outs) != len(hs) {
		return nil, fmt.Errorf("hlog: %d writers for %d histograms", len(outs), len(hs))
	}
	w := &Writer{recs: recs, start: start, last: start}
	for i, o := range outs {
		bw := bufio.NewWriter(o)
		lw := hdrhistogram.NewHistogramLogWriter(bw)
		// The format's BaseTime is whole seconds: interval times are relative to the second the
		// run started in, and the comment gives the run's start to the millisecond.
		base := start.Unix() * 1000
		lw.SetBaseTime(base)
		err := firstErr(
			lw.OutputLogFormatVersion(),
			lw.OutputComment(fmt.Sprintf("[mcpchaos %s, microseconds; Interval_Max is the max / 1e6, in seconds; Tag is the client group]", hs[i])),
			lw.OutputComment(fmt.Sprintf("%s%s start_ms: %d]", RunIDComment, runID, start.UnixMilli())),
			lw.OutputStartTime(start.UnixMilli()),
			lw.OutputBaseTime(base),
			lw.OutputLegend(),
		)
		if err != nil {
			return nil, err
		}
		w.ws, w.logs = append(w.ws, bw), append(w.logs, lw)
	}
	w.prev = make([][]*hdrhistogram.Histogram, len(recs))
	for g := range recs {
		w.prev[g] = make([]*hdrhistogram.Histogram, len(hs))
		for h := range hs {
			w.prev[g][h] = metrics.NewHistogram()
		}
	}
	return w, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Interval writes, for every group and histogram, what was recorded since the last call (or
// the start) until now. A call less than 100 ms after the last writes nothing: the first tick
// comes at the start itself.
func (w *Writer) Interval(now time.Time) error {
	if w.err != nil || now.Sub(w.last) < 100*time.Millisecond {
		return w.err
	}
	for g, rec := range w.recs {
		snap := rec.Snapshot()
		tag := tagOf(rec.Name)
		for h := range w.logs {
			cur := snap.Hists[h]
			d := delta(cur, w.prev[g][h])
			d.SetTag(tag)
			d.SetStartTimeMs(w.last.UnixMilli())
			d.SetEndTimeMs(now.UnixMilli())
			if err := w.logs[h].OutputIntervalHistogram(d); err != nil {
				w.err = fmt.Errorf("hlog %s: %w", metrics.Hist(h), err)
				return w.err
			}
			w.prev[g][h] = cur
		}
	}
	w.last = now
	for _, bw := range w.ws {
		if err := bw.Flush(); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// Close writes the last interval, up to end, and flushes.
func (w *Writer) Close(end time.Time) error {
	if end.Sub(w.last) < 100*time.Millisecond {
		end = w.last.Add(100 * time.Millisecond) // never lose what the last moments recorded
	}
	return w.Interval(end)
}

// delta is cur minus prev, bucket by bucket: what was recorded between the two.
func delta(cur, prev *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	c, p := cur.Export(), prev.Export()
	for i := range c.Counts {
		if i < len(p.Counts) {
			c.Counts[i] = max(0, c.Counts[i]-p.Counts[i])
		}
	}
	return hdrhistogram.Import(c)
}

// tagOf makes a group name a valid tag: no commas, spaces or line breaks.
func tagOf(name string) string {
	return strings.Map(func(r rune) rune {
		if r == ',' || r == ' ' || r == '\r' || r == '\n' || r == '\t' {
			return '_'
		}
		return r
	}, name)
}
