package shards

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Check checks a plan of n shard processes of w on this machine before anything starts, and
// returns Fit's warnings. A workload that restarts, rebalances or scales the reference server
// cannot be sharded (the shards would each meet the one server process by URL); the
// descriptors of each process's part (engine.CheckDescriptors) and the machine's memory and
// ports (Fit) must hold it. Its refusals are *engine.ConfigError (the command's exit 2).
func Check(w *workloads.Workload, n int, serve bool) (warnings []string, err error) {
	if f := w.TopologyAction(); f != nil {
		return nil, &engine.ConfigError{Field: "procs", Err: fmt.Errorf("--procs: %s: %s acts on the reference server run by the process of the run; run this workload without --procs", f.Where, f.Action.Kind)}
	}
	if err := engine.CheckDescriptors(w, n); err != nil { // each process's part, on this machine
		return nil, err
	}
	warnings, err = Fit(w, n, ThisMachine(), serve) // memory, ports, cores
	if err != nil {
		return nil, &engine.ConfigError{Field: "procs", Err: fmt.Errorf("--procs %d: %v", n, err)}
	}
	return warnings, nil
}

// ParentOnly are the run flags the parent of a --procs run keeps: each shard is given its own
// --out, --progress, --quiet and --formats (Supervisor), and the outputs, the live endpoint
// and the interval logs are the parent's.
var ParentOnly = []string{"out", "progress", "quiet", "formats", "procs", "shard", "start-at",
	"metrics-addr", "metrics-public", "metrics-linger", "hlog", "hlog-dir"}

// FlagArgs are the run flags set in f but the parent's (ParentOnly), for every shard
// (Config.Args), as given: a header's value passes unexpanded, and each process expands it
// from the environment it shares; each shard pushes its own series with --remote-write, told
// apart by their shard label.
func FlagArgs(f *pflag.FlagSet) []string {
	var a []string
	f.Visit(func(fl *pflag.Flag) {
		if slices.Contains(ParentOnly, fl.Name) {
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok { // repeatable: --header, --threshold, --label, ...
			for _, v := range sv.GetSlice() {
				a = append(a, "--"+fl.Name, v)
			}
			return
		}
		a = append(a, "--"+fl.Name+"="+fl.Value.String())
	})
	return a
}

// Self is the command to start more mcpchaos processes with (Config.Binary): the program as
// it was invoked (so that a renamed or wrapped binary starts copies of itself), else the
// running executable.
func Self() (string, error) {
	if p, err := exec.LookPath(os.Args[0]); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs, nil
		}
	}
	return os.Executable()
}

// Outcome is the error a sharded run whose exports were merged ends with: interrupted
// (engine.ErrInterrupted); the merge incomplete (results.IncompleteErr: it did not measure the
// server, which is said first) and shards that failed (Err), joined; else the merged export's
// verdict (results.VerdictErr: a *results.GateError when its gate failed).
func (r *Result) Outcome() error {
	if r.Interrupted {
		return engine.ErrInterrupted
	}
	incomplete, failed := results.IncompleteErr(r.Export, true), r.Err()
	switch {
	case incomplete != nil && failed != nil:
		return fmt.Errorf("%w; and %w", incomplete, failed)
	case incomplete != nil:
		return incomplete
	case failed != nil:
		return failed
	}
	return results.VerdictErr(r.Export)
}
