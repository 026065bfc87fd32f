package workloads

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// The builtin workloads ship inside the binary, so a new user can run one
// against the reference server with nothing else on disk.
//
//go:embed builtin/*.yaml
var builtinFS embed.FS

// BuiltinNames lists the builtin workloads by name (file name without
// .yaml), sorted.
func BuiltinNames() []string {
	entries, err := fs.ReadDir(builtinFS, "builtin")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && !e.IsDir() {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// Builtin loads the builtin workload of that name. Its Source is
// "builtin:<name>".
func Builtin(name string) (*Workload, error) {
	if !slices.Contains(BuiltinNames(), name) {
		return nil, &NotFoundError{Arg: name, Builtins: BuiltinNames()}
	}
	data, err := builtinFS.ReadFile(path.Join("builtin", name+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("builtin workload %s: %w", name, err)
	}
	return Parse("builtin:"+name, data)
}

// Resolve finds the workload a user named on the command line: an existing
// file is loaded (a file wins over a builtin of the same name); otherwise a
// builtin name, written as "seed-incident", "seed-incident.yaml" or
// "builtin:seed-incident", is loaded from the builtins. Anything else is a
// *NotFoundError listing the builtin names.
func Resolve(arg string) (*Workload, error) {
	if !strings.HasPrefix(arg, "builtin:") {
		st, err := os.Stat(arg)
		switch {
		case err == nil && st.IsDir():
			return nil, fmt.Errorf("workload %s: is a directory; give a workload file or one of: %s", arg, strings.Join(BuiltinNames(), ", "))
		case err == nil:
			return Load(arg)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("workload %s: %w", arg, err)
		}
	}
	name := strings.TrimSuffix(strings.TrimPrefix(arg, "builtin:"), ".yaml")
	if slices.Contains(BuiltinNames(), name) {
		return Builtin(name)
	}
	return nil, &NotFoundError{Arg: arg, Builtins: BuiltinNames()}
}
