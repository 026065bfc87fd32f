package merge

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/mcpchaos/mcpchaos/results"
)

// ReadShards reads the shards of `mcpchaos merge`: each path a file, or a directory whose *.json
// shards are taken (its other exports, such as an earlier merge, are skipped with a note on
// notes). A path that is not there is a results.FileError; a directory without shards, a
// results.MismatchError.
func ReadShards(args []string, notes io.Writer) ([]results.Part, error) {
	var parts []results.Part
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, &results.FileError{Path: a, Msg: fmt.Sprintf("%v; give shard exports (files) or directories holding them", unwrapPathErr(err)), Err: err}
		}
		if !st.IsDir() {
			e, err := results.ReadFile(a)
			if err != nil {
				return nil, err
			}
			parts = append(parts, results.Part{File: a, Export: e})
			continue
		}
		files, err := filepath.Glob(filepath.Join(a, "*.json"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		found := 0
		for _, file := range files {
			e, err := results.ReadFile(file)
			if err != nil {
				return nil, err
			}
			if e.Run.Shard == nil {
				fmt.Fprintf(notes, "mcpchaos: skipping %s: not a shard\n", file)
				continue
			}
			parts = append(parts, results.Part{File: file, Export: e})
			found++
		}
		if found == 0 {
			return nil, results.Mismatchf("%s holds no shard exports (*.json written by mcpchaos run --shard)", a)
		}
	}
	return parts, nil
}

// unwrapPathErr is the cause of a *os.PathError, without the path it names already.
func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
