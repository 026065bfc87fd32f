package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/outfile"
	"github.com/mcpchaos/mcpchaos/results"
)

// An export and its companions are one set (outfile.Set): every path is checked before any
// work, with a usage error (exit 2) naming what is wrong, and the set is marked incomplete
// while it is written (results.WriteExportSet).

// checkOutputs says, before any work, whether the export at out and the companions of formats
// can be written: not a directory, in a directory that takes files, no two the same file.
func checkOutputs(flag, out string, formats []string) error {
	set := results.CompanionSet(out, results.CompanionFormats(out, formats))
	if err := set.Check(); err != nil {
		return usagef("%s %s: %v", flag, out, err)
	}
	_ = set.Clean() // an earlier run's temporaries: what cannot be removed stays, harmless
	return nil
}

// printExport says where the export (and what is said beside it) and its companions were
// written.
func printExport(w io.Writer, export string, written []string) {
	fmt.Fprintf(w, "\nexport: %s\n", export)
	if len(written) > 0 {
		fmt.Fprintf(w, "        %s\n", strings.Join(written, "\n        "))
	}
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
