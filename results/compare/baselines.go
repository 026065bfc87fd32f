package compare

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/mcpchaos/mcpchaos/results"
)

// ReadBaselines reads the baseline exports of compare: files, and every *.json export in a
// directory (the current file excluded), newest first. Runs that were not good (failed,
// interrupted, aborted) are left out and named in skipped; with last > 0 only the newest last
// good runs are kept. No good run at all is no error: bases is empty.
func ReadBaselines(args []string, curFile string, last int) (bases []results.Part, skipped []string, err error) {
	var files []string
	curAbs, _ := filepath.Abs(curFile)
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			files = append(files, a)
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(a, "*.json"))
		if len(matches) == 0 {
			return nil, nil, &results.FileError{Path: a, Msg: "a directory without JSON exports; give baseline exports or a directory holding them"}
		}
		for _, m := range matches {
			if abs, _ := filepath.Abs(m); abs != curAbs { // a history directory may hold the current run
				files = append(files, m)
			}
		}
	}
	for _, f := range files {
		e, err := results.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		if !results.Good(e) {
			skipped = append(skipped, f+": not a good run ("+results.RunStatus(e)+")")
			continue
		}
		bases = append(bases, results.Part{File: f, Export: e})
	}
	sort.SliceStable(bases, func(i, j int) bool { return bases[i].Export.Run.Start.After(bases[j].Export.Run.Start) })
	if last > 0 && len(bases) > last {
		for _, b := range bases[last:] {
			skipped = append(skipped, b.File+": older than the --last "+strconv.Itoa(last))
		}
		bases = bases[:last]
	}
	return bases, skipped, nil
}
