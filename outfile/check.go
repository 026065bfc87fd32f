package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Check says, before any work, whether path could be written: "-" always; a device node if it
// may be opened for writing; a FIFO if a process reads it (it is opened now and held for the
// write: direct.go); a regular file or a new path if its directory (or the
// nearest one that exists) takes a new file, which is probed by creating and removing an empty
// temporary file there. The probe is what works for root too, for whom permission bits stop
// nothing but a read-only file system does. A directory, a socket, or a path under a regular
// file is refused. A disk that fills up later is found only when writing.
func Check(path string) error {
	if path == Stdout {
		return nil
	}
	if path == "" {
		return errors.New("an empty file name")
	}
	target, err := resolve(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(target)
	switch {
	case err == nil && fi.Mode()&fs.ModeNamedPipe != 0:
		return hold(path, target) // open now, so that its reader is there when the work is done
	case err == nil && direct(fi.Mode()):
		if err := syscall.Access(target, 2 /* W_OK */); err != nil {
			return fmt.Errorf("%s cannot be written: %w", path, err)
		}
		return nil
	case err == nil && !fi.Mode().IsRegular():
		return notWritable(path, target, fi.Mode())
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return err
	}
	if err := probe(filepath.Dir(target)); err != nil {
		return fmt.Errorf("%s cannot be written: %w", path, err)
	}
	return nil
}

// probe says whether dir (or, where it does not exist yet, its nearest ancestor) takes a new
// file, by creating and removing one.
func probe(dir string) error {
	dir, err := existingDir(dir)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".mcpchaos-probe-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the probe's own name says nothing to the user
		}
		return fmt.Errorf("the directory %s takes no new file (%w)", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// existingDir is dir or its nearest ancestor that exists, which must be a directory (a path
// "under" a regular file can never be made).
func existingDir(dir string) (string, error) {
	for {
		fi, err := os.Stat(dir)
		switch {
		case err == nil && fi.IsDir():
			return dir, nil
		case err == nil:
			return "", fmt.Errorf("%s is not a directory", dir)
		case !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no directory of %s exists", dir)
		}
		dir = parent
	}
}

// Same says whether two output paths name the same file once their links are followed, so
// that one output would overwrite another.
func Same(a, b string) bool {
	if a == Stdout || b == Stdout {
		return false
	}
	ra, err1 := resolve(a)
	rb, err2 := resolve(b)
	if err1 != nil || err2 != nil {
		ra, rb = a, b
	}
	if abs(ra) == abs(rb) {
		return true
	}
	fa, err1 := os.Stat(ra)
	fb, err2 := os.Stat(rb)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// Within says whether path lies inside dir (links followed), where replacing dir would take it.
func Within(path, dir string) bool {
	rp, err1 := resolve(path)
	rd, err2 := resolve(dir)
	if err1 != nil || err2 != nil {
		rp, rd = path, dir
	}
	rel, err := filepath.Rel(abs(rd), abs(rp))
	return err == nil && rel != "." && rel != ".." && !filepath.IsAbs(rel) && !startsUp(rel)
}

func startsUp(rel string) bool {
	return len(rel) >= 3 && rel[:3] == ".."+string(filepath.Separator)
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// IsDirect says whether path is written in place rather than replaced: "-", a device node or
// a FIFO (links followed). Files named after such a path (companions) have nowhere to go.
func IsDirect(path string) bool {
	if path == Stdout {
		return true
	}
	target, err := resolve(path)
	if err != nil {
		return false
	}
	fi, err := os.Stat(target)
	return err == nil && direct(fi.Mode())
}
