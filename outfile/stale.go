package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The files of the tool's own beside an export: a marker (Marker) and the temporaries that an
// atomic write makes (".NAME.tmp-DIGITS" files, ".NAME.tmp-DIGITS" and ".NAME.old-DIGITS"
// directories). They are created with O_EXCL (and the marker with O_NOFOLLOW), so a link
// planted under their name is never written through; and those that an earlier run left, cut
// short by a second signal or a crash, are removed when a set is next written, by their exact
// names, never through a link, and only if they are older than this process (a writer running
// now keeps its own).

// processStart tells an earlier run's temporaries from this process's own.
var processStart = time.Now()

// Clean removes the temporaries an earlier run left beside the set's files and directories.
// What is not exactly the tool's (a link, a directory holding other files) is left as it is.
// It reports what it could not remove; the run goes on regardless.
func (s Set) Clean() error {
	if s.Export == Stdout || IsDirect(s.Export) {
		return nil
	}
	var errs []error
	for _, p := range append(append(append([]string{s.Export}, s.Files...), s.Dirs...), s.Stale...) {
		errs = append(errs, cleanTemps(p, s.DirExt))
	}
	return errors.Join(errs...)
}

// cleanTemps removes the stale temporaries of the file or directory at path.
func cleanTemps(path, ext string) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // no directory yet: nothing left there
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		fi, err := os.Lstat(filepath.Join(dir, name)) // the entry itself, never what it links to
		if err != nil || !fi.ModTime().Before(processStart) {
			continue
		}
		p := filepath.Join(dir, name)
		switch {
		case isTempOf(name, base, ".tmp-") && fi.Mode().IsRegular():
			errs = append(errs, os.Remove(p))
		case isTempOf(name, base, ".tmp-") && fi.IsDir() && ownFiles(p, ext) == nil:
			errs = append(errs, removeOwn(p, ext))
		case isTempOf(name, base, ".old-") && fi.IsDir():
			errs = append(errs, removeAside(p, base, ext))
		}
	}
	return errors.Join(errs...)
}

// isTempOf says whether name is "."+base+kind followed by the digits os.CreateTemp and
// os.MkdirTemp put in place of "*".
func isTempOf(name, base, kind string) bool {
	rest, ok := strings.CutPrefix(name, "."+base+kind)
	if !ok || rest == "" {
		return false
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// removeAside removes a directory ReplaceDir moved an old set into (it holds one directory,
// base, of the tool's own files), if that is all it holds.
func removeAside(aside, base, ext string) error {
	entries, err := os.ReadDir(aside)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() != base || !e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			return nil // not what ReplaceDir leaves: not ours to remove
		}
		if err := removeOwn(filepath.Join(aside, base), ext); err != nil {
			return err
		}
	}
	return os.Remove(aside)
}

// writeMarker creates the marker at path afresh: a regular file an earlier run left is
// removed first; anything else there (a link, a directory) is not the tool's, and refused.
// O_EXCL|O_NOFOLLOW: a link planted between the two steps makes the creation fail, never
// writes through it.
func writeMarker(path string, text []byte) error {
	if err := checkMarker(path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// checkMarker says whether the marker's name is free or holds a marker (a regular file).
func checkMarker(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a marker of mcpchaos (it is %s); remove it, or choose another --out", path, kindOf(fi.Mode()))
	}
	return nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "a device"
	}
	return "not a regular file"
}
