package main

import (
	"github.com/spf13/pflag"

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

// hlogDir is where the logs of a run exported to out go (hlog.Dir).
func (hf *hlogFlags) hlogDir(out string) string { return hlog.Dir(out, hf.dir) }

// check says, before any work, whether the logs can be written (hlog.Check), and not by a
// --procs run.
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
	if err := hlog.Check(out, hf.dir); err != nil {
		return usagef("%s: %v", flag, err)
	}
	return nil
}
