package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/outfile"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/hlog"
)

// hlogFlags are run's --hlog flags: an HdrHistogram interval log per histogram (package
// hlog), beside the export (<export>.hlog/) or in --hlog-dir.
type hlogFlags struct {
	beside bool
	dir    string
}

func (hf *hlogFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&hf.beside, "hlog", false, "write an HdrHistogram interval log (.hlog, one interval a second) per histogram beside the export: <export>.hlog/<histogram>.hlog")
	f.StringVar(&hf.dir, "hlog-dir", "", "write the interval logs of --hlog into this directory instead (implies --hlog)")
}

func (hf *hlogFlags) on() bool { return hf.beside || hf.dir != "" }

// hlogDir is where the logs of a run exported to out go.
func (hf *hlogFlags) hlogDir(out string) string {
	if hf.dir != "" {
		return hf.dir
	}
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".hlog"
}

// check says, before any work, whether the logs can be written: a directory that holds only
// .hlog files (it is replaced whole, as --formats hgrm's is), and not the export's place.
func (hf *hlogFlags) check(out string, procs int) error {
	if !hf.on() {
		return nil
	}
	flag := "--hlog"
	if hf.dir != "" {
		flag = "--hlog-dir " + hf.dir
	}
	if procs > 1 {
		return usagef("%s: not with --procs (each shard process would write its own logs); run the shards with --shard and --hlog-dir each", flag)
	}
	export := out
	if outfile.IsDirect(out) {
		if hf.dir == "" {
			return usagef("--hlog: the logs are named after the export, which goes to %s; give --hlog-dir DIR", out)
		}
		// The export has no file to clash with: check the directory alone, beside a name of
		// its parent's that is never written.
		export = filepath.Join(filepath.Dir(filepath.Clean(hf.dir)), ".mcpchaos-hlog-check.json")
	}
	set := outfile.Set{Export: export, Dirs: []string{hf.hlogDir(out)}, DirExt: ".hlog"}
	if err := set.Check(); err != nil {
		return usagef("%s: %v", flag, err)
	}
	return nil
}

// hlogObserver streams the logs into a directory of their own beside their final place while
// the run goes on (hlog.Live); finish moves them into place once the export is written.
type hlogObserver struct {
	fl     hlogFlags
	out    string // the export's path (its directory takes the live logs)
	stderr io.Writer

	live *hlog.Live
	err  error // the first write error: logging stops, the run goes on
}

func (o *hlogObserver) Start(v *engine.View) error {
	live, err := hlog.StartLive(filepath.Dir(o.fl.hlogDir(o.out)), v.Recorders(), v.Start, v.RunID)
	if err != nil {
		return fmt.Errorf("--hlog: %w", err)
	}
	o.live = live
	return nil
}

func (o *hlogObserver) Every() time.Duration { return time.Second }

func (o *hlogObserver) Observe(_ *engine.View, now time.Time) { o.note(o.live.Interval(now)) }

func (o *hlogObserver) note(err error) {
	if err != nil && o.err == nil {
		o.err = err
		fmt.Fprintf(o.stderr, "warning: --hlog: %v; the interval logs stop here\n", err)
	}
}

// Stop writes the last interval, up to the run's end, and closes the files.
func (o *hlogObserver) Stop(_ *engine.View, end time.Time) {
	if o.live != nil {
		o.note(o.live.Close(end))
	}
}

// finish puts the logs of the run exported to out in place (replacing the directory whole)
// and returns the directory written; nothing when they could not be written.
func (o *hlogObserver) finish(out string) (string, error) {
	if o == nil || o.live == nil {
		return "", nil
	}
	if o.err != nil {
		o.cleanup()
		return "", nil // said when it happened
	}
	dir := o.fl.hlogDir(out)
	err := o.live.Finish(dir)
	o.live = nil
	if err != nil {
		return "", err
	}
	return dir + string(filepath.Separator), nil
}

// cleanup removes the live logs (a run that ends before its export leaves none behind).
func (o *hlogObserver) cleanup() {
	if o == nil || o.live == nil {
		return
	}
	if err := o.live.Remove(); err != nil {
		fmt.Fprintf(o.stderr, "warning: --hlog: %v\n", err)
	}
	o.live = nil
}

// hlogsBeside reads the interval logs of the run exported at path from the directory beside
// it (<export>.hlog/, as run --hlog writes it), by histogram; nil when there is none. A log of
// another run left there, or a damaged one, is left out and said on w.
func hlogsBeside(path string, e *results.Export, w io.Writer) map[string]*hlog.Log {
	dir := (&hlogFlags{beside: true}).hlogDir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	out := map[string]*hlog.Log{}
	for _, h := range metrics.Hists() {
		p := filepath.Join(dir, h.String()+".hlog")
		l, err := hlog.ReadFile(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			fmt.Fprintf(w, "warning: %v; left out of the report\n", err)
			continue
		case l.RunID != e.Run.ID:
			fmt.Fprintf(w, "warning: %s is of run %q, not of %s (run %q); left out of the report\n", p, l.RunID, path, e.Run.ID)
			continue
		}
		out[h.String()] = l
	}
	return out
}
