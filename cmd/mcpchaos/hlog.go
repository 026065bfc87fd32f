package main

import (
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/outfile"
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
	return hlog.DirBeside(out)
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
