package hlog

import (
	"fmt"
	"path/filepath"

	"github.com/mcpchaos/mcpchaos/outfile"
)

// Dir is where the logs of a run exported to out go: dir when given (run --hlog-dir), else
// beside the export (DirBeside).
func Dir(out, dir string) string {
	if dir != "" {
		return dir
	}
	return DirBeside(out)
}

// Check says, before any work, whether the logs of a run exported to out can be written into
// Dir(out, dir): a directory that holds only .hlog files (it is replaced whole, as --formats
// hgrm's is), and not the export's place. An export to standard output has no name to put
// the logs beside: they need a dir of their own.
func Check(out, dir string) error {
	export := out
	if outfile.IsDirect(out) {
		if dir == "" {
			return fmt.Errorf("the logs are named after the export, which goes to %s; give --hlog-dir DIR", out)
		}
		// The export has no file to clash with: check the directory alone, beside a name of
		// its parent's that is never written.
		export = filepath.Join(filepath.Dir(filepath.Clean(dir)), ".mcpchaos-hlog-check.json")
	}
	set := outfile.Set{Export: export, Dirs: []string{Dir(out, dir)}, DirExt: ".hlog"}
	return set.Check()
}
