package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpchaos/mcpchaos/outfile"
	"github.com/mcpchaos/mcpchaos/results"
)

// An export and its companions are one set (outfile.Set): every path is checked before any
// work, with a usage error (exit 2) naming what is wrong, and the set is marked incomplete
// while it is written.

// checkOutputs says, before any work, whether the export at out and the companions of formats
// can be written: not a directory, in a directory that takes files, no two the same file.
func checkOutputs(flag, out string, formats []string) error {
	set := results.CompanionSet(out, companionFormats(out, formats))
	if err := set.Check(); err != nil {
		return usagef("%s %s: %v", flag, out, err)
	}
	_ = set.Clean() // an earlier run's temporaries: what cannot be removed stays, harmless
	return nil
}

// companionFormats are the companions an export at out gets: none when it goes to standard
// output, a device or a FIFO, which give companions no name to be named after (/dev/null.csv).
func companionFormats(out string, formats []string) []string {
	if outfile.IsDirect(out) {
		return nil
	}
	return formats
}

// writeExportSet writes the export and its companions, removes the companions an earlier run
// left under this name in formats not asked for now, and returns the companion paths written.
// Until it returns without error, the set's marker (outfile.Marker) says it is incomplete.
// An export to a device or a FIFO ends on a signal while it is written (ctx, if still live:
// a run that a signal stopped still writes its partial export, bounded by outfile.Stall).
func writeExportSet(ctx context.Context, out string, e *results.Export, formats []string) ([]string, error) {
	if ctx.Err() != nil {
		ctx = context.Background()
	}
	formats = companionFormats(out, formats)
	set := results.CompanionSet(out, formats)
	if err := set.Begin(); err != nil {
		return nil, fmt.Errorf("writing the export: %w", err)
	}
	if err := results.WriteFileContext(ctx, out, e); err != nil {
		return nil, fmt.Errorf("writing the export: %w", err)
	}
	written, err := results.WriteCompanions(out, e, formats)
	if err != nil {
		return written, err
	}
	if err := set.Done(); err != nil {
		return written, fmt.Errorf("completing the export's set: %w", err)
	}
	return written, nil
}

// checkJSONOut checks inspect's --json file before any work.
func checkJSONOut(path string) error {
	if path == "" {
		return nil
	}
	if err := outfile.Check(path); err != nil {
		return usagef("--json %s: %v", path, err)
	}
	return nil
}

// outPath is where run's export goes: --out, or the default path (its time is the run's start,
// so the name checked before the run differs, but not its directory).
func outPath(out, workload string) string {
	if out == "" {
		return results.DefaultPath(workload, time.Now())
	}
	return out
}
