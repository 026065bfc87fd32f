package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Set is an export and the companion files named after it, written as one set: they must never
// overwrite one another, never mix two runs, and a set cut short must say so.
type Set struct {
	Export string   // the main file
	Files  []string // companion files to write this time
	Dirs   []string // companion directories to write this time, each replaced whole
	// Stale are the companions of formats not asked for this time: what a previous run left
	// there is removed when the set is written, so that no companion describes another run.
	Stale []string
	// DirExt is what every file in a companion directory is named with; a directory holding
	// anything else was not written by the tool and is never replaced or removed.
	DirExt string
}

// Marker is the file that marks the set of the export at path as incomplete: written before
// the set's first file and removed after its last, so it remains only beside a set that a
// second signal, a crash or a full disk cut short.
func Marker(export string) string { return export + ".incomplete" }

// Check says whether the whole set could be written, before any work: every path as Check
// says, no two the same file and no file inside a directory that is replaced whole.
func (s Set) Check() error {
	if err := Check(s.Export); err != nil {
		return err
	}
	if s.Export == Stdout {
		if len(s.Files)+len(s.Dirs) > 0 {
			return errors.New("companion files are named after the export: with the export on standard output, ask for none")
		}
		return nil
	}
	if err := checkMarker(Marker(s.Export)); err != nil {
		return err
	}
	all := append([]string{s.Export, Marker(s.Export)}, s.Files...)
	for _, f := range all[2:] {
		if err := Check(f); err != nil {
			return err
		}
	}
	for _, d := range s.Dirs {
		if err := checkDir(d, s.DirExt); err != nil {
			return err
		}
	}
	for i, a := range all {
		for _, b := range all[i+1:] {
			switch {
			case Same(a, b) && i == 0:
				return fmt.Errorf("the companion %s would overwrite the export; give the export a name ending in .json", b)
			case Same(a, b):
				return fmt.Errorf("the companions %s and %s would be the same file; give the export a name ending in .json", a, b)
			}
		}
		for _, d := range s.Dirs {
			if Same(a, d) || Within(a, d) {
				return fmt.Errorf("%s would be replaced by the companion directory %s; give the export a name ending in .json", a, d)
			}
		}
	}
	return nil
}

// Begin marks the set as being written (see Marker).
func (s Set) Begin() error {
	if s.Export == Stdout || IsDirect(s.Export) {
		return nil
	}
	return writeMarker(Marker(s.Export), []byte("The export "+filepath.Base(s.Export)+
		" and its companions are being written, or their writing was cut short: while this file exists, the set is incomplete.\n"))
}

// Done removes what a previous run left under the stale names and then the marker: the set
// is complete.
func (s Set) Done() error {
	if s.Export == Stdout || IsDirect(s.Export) {
		return nil
	}
	var errs []error
	for _, p := range s.Stale {
		if Same(p, s.Export) || Within(s.Export, p) {
			continue // the export now goes by a companion's name (--out r.csv --formats none)
		}
		errs = append(errs, removeStale(p, s.DirExt))
	}
	if err := os.Remove(Marker(s.Export)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ReplaceDir writes a directory whole: fill writes its files into a fresh temporary directory
// beside it, which then takes the place of the old one (whose files, all ending in ext, are
// removed). A reader sees the old set or the new one, never a mix.
func ReplaceDir(dir, ext string, fill func(tmp string) error) error {
	target, err := resolve(dir)
	if err != nil {
		return err
	}
	if err := checkDir(target, ext); err != nil {
		return err
	}
	parent, base := filepath.Dir(target), filepath.Base(target)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, done, err := mkdirTemp(parent, "."+base+".tmp-*", ext)
	if err != nil {
		return err
	}
	defer done()
	if err := fill(tmp); err != nil {
		return errors.Join(err, removeOwn(tmp, ext))
	}
	if err := chmodDir(tmp, 0o755); err != nil {
		return errors.Join(err, removeOwn(tmp, ext))
	}
	aside := ""
	if _, err := os.Lstat(target); err == nil {
		// Move the old set into a fresh directory of its own (no name race), then the new
		// one into place.
		// (Not recorded for RemoveInFlight: between these two renames it holds the old set.)
		if aside, err = os.MkdirTemp(parent, "."+base+".old-*"); err != nil {
			return errors.Join(err, removeOwn(tmp, ext))
		}
		if err := os.Rename(target, filepath.Join(aside, base)); err != nil {
			return errors.Join(err, os.Remove(aside), removeOwn(tmp, ext))
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return errors.Join(err, removeOwn(tmp, ext))
	}
	syncDir(parent)
	if aside != "" {
		return errors.Join(removeOwn(filepath.Join(aside, base), ext), os.Remove(aside))
	}
	return nil
}

// checkDir says whether dir may be replaced by a companion directory: absent (and creatable),
// or a directory holding only regular files ending in ext.
func checkDir(dir, ext string) error {
	target, err := resolve(dir)
	if err != nil {
		return err
	}
	fi, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Check(filepath.Join(target, "x"+ext))
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory; it would be replaced by the companion directory of that name", dir)
	}
	if err := ownFiles(target, ext); err != nil {
		return err
	}
	if err := probe(filepath.Dir(target)); err != nil { // its parent takes the new directory
		return fmt.Errorf("%s cannot be replaced: %w", dir, err)
	}
	return nil
}

// ownFiles says whether dir holds only what the tool writes there.
func ownFiles(dir, ext string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !(strings.HasSuffix(e.Name(), ext) || isTemp(e.Name())) {
			return fmt.Errorf("%s holds %s, which is not a %s file of mcpchaos; move it, or choose another --out", dir, e.Name(), ext)
		}
	}
	return nil
}

// isTemp says whether name is a temporary file that replace leaves only when cut short.
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}

// removeOwn removes a directory of the tool's own files, and nothing else.
func removeOwn(dir, ext string) error {
	if err := ownFiles(dir, ext); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return os.Remove(dir)
}

// removeStale removes a companion a previous run left: a regular file, or a directory of the
// tool's own files. A link, a device or anything else is left as it is.
func removeStale(path, ext string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode().IsRegular():
		return os.Remove(path)
	case fi.IsDir() && ownFiles(path, ext) == nil:
		return removeOwn(path, ext)
	}
	return nil // not the tool's: left as it is
}

// chmodDir changes the mode of the directory it opens, not of whatever its name may have been
// made to link to since it was created.
func chmodDir(dir string, perm fs.FileMode) error {
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Chmod(perm)
}
