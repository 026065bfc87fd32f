package hlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// Interval is one line of a log: a group's histogram over [StartS, EndS) seconds since the
// run's start.
type Interval struct {
	Group        string
	StartS, EndS float64
	Hist         *hdrhistogram.Histogram
}

// Log is one .hlog file read back.
type Log struct {
	RunID     string // "" for a log mcpchaos did not write
	Intervals []Interval
	startMS   int64 // the run's start, ms since the epoch (0: times stay absolute)
}

// maxLogBytes bounds what is read of one log: a day of one-second intervals of a few groups
// stays far below it.
const maxLogBytes = 256 << 20

// ReadFile reads the log at path with the library's reader, times relative to the run's
// start.
func ReadFile(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l, err := Read(io.LimitReader(f, maxLogBytes))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// Read reads a log (see ReadFile).
func Read(r io.Reader) (*Log, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	l := &Log{}
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "#"+RunIDComment); ok {
			id, ms, ok := strings.Cut(strings.TrimSuffix(rest, "]"), " start_ms: ")
			n, err := strconv.ParseInt(ms, 10, 64)
			if !ok || err != nil {
				return nil, fmt.Errorf("the mcpchaos comment %q: want run_id: ID start_ms: MILLISECONDS", sc.Text())
			}
			l.RunID, l.startMS = id, n
			break
		}
	}
	lr := hdrhistogram.NewHistogramLogReader(strings.NewReader(string(raw)))
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("interval %d: %w", len(l.Intervals)+1, err)
		}
		if h == nil {
			return l, nil
		}
		// The reader stamps absolute times (ms since the epoch).
		l.Intervals = append(l.Intervals, Interval{Group: h.Tag(), Hist: h,
			StartS: float64(h.StartTimeMs()-l.startMS) / 1000, EndS: float64(h.EndTimeMs()-l.startMS) / 1000})
	}
}

// DirBeside is the directory beside the export at path that run --hlog writes its logs into:
// the export's name without its extension, then ".hlog".
func DirBeside(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".hlog"
}

// ReadBeside reads the interval logs of the run runID exported at path from the directory
// beside it (DirBeside), by histogram; nil when there is none. A log of another run left
// there, or a damaged one, is left out and said on w.
func ReadBeside(path, runID string, w io.Writer) map[string]*Log {
	dir := DirBeside(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	out := map[string]*Log{}
	for _, h := range metrics.Hists() {
		p := filepath.Join(dir, h.String()+".hlog")
		l, err := ReadFile(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			fmt.Fprintf(w, "warning: %v; left out of the report\n", err)
			continue
		case l.RunID != runID:
			fmt.Fprintf(w, "warning: %s is of run %q, not of %s (run %q); left out of the report\n", p, l.RunID, path, runID)
			continue
		}
		out[h.String()] = l
	}
	return out
}
