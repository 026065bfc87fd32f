// Package outfile writes the files a command was asked to write (an export, its companions, a
// fingerprint, a report) and checks, before any work, that they can be written.
//
// The tool runs as root in CI containers, so it must never replace anything but a regular file:
// a regular file (or a new path) is replaced atomically, through a synced temporary file in the
// same directory renamed over it; a device node or a FIFO is written to directly; a symlink is
// followed, and its target treated by these rules, the link itself left as it is; "-" is
// standard output. A FIFO is opened when checked and its writes are bounded in time (direct.go).
// The files of its own (markers, temporaries) are created with O_EXCL, never through a link,
// and those an earlier run left are removed by their exact names (stale.go). It knows nothing
// of what it writes, and never removes a file it was not told is one of its own.
package outfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Stdout is the path that means standard output, for every command that writes a file.
const Stdout = "-"

// maxLinks bounds how many symlinks are followed, as the kernel does (ELOOP).
const maxLinks = 40

// Write writes data to path: to stdout for "-", directly to a device node or a FIFO, and
// otherwise atomically (see the package comment). Missing directories are made.
func Write(path string, stdout io.Writer, data []byte) error {
	return WriteWith(path, stdout, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith writes what write produces to path, as Write does. For a regular file the whole
// content is produced before anything is replaced, so a failing write leaves the old file.
func WriteWith(path string, stdout io.Writer, write func(io.Writer) error) error {
	return WriteWithContext(context.Background(), path, stdout, write)
}

// WriteWithContext writes as WriteWith does; a write to a device or a FIFO also ends when ctx
// is done (its content then goes beside it: Diverted).
func WriteWithContext(ctx context.Context, path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == Stdout {
		return write(stdout)
	}
	target, err := resolve(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return replace(target, 0o644, write)
	case err != nil:
		return err
	case fi.Mode().IsRegular():
		return replace(target, fi.Mode().Perm(), write)
	case direct(fi.Mode()):
		return writeDirect(ctx, path, target, fi.Mode()&fs.ModeNamedPipe != 0, write)
	default:
		return notWritable(path, target, fi.Mode())
	}
}

// direct says whether a file of this mode is written in place: a device or a FIFO, which
// must never be replaced by a regular file.
func direct(m fs.FileMode) bool {
	return m&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe) != 0
}

func notWritable(path, target string, m fs.FileMode) error {
	what := "not a regular file, a device or a FIFO"
	if m.IsDir() {
		what = "a directory; give a file name"
	}
	if target != path {
		return fmt.Errorf("%s (a link to %s) is %s", path, target, what)
	}
	return fmt.Errorf("%s is %s", path, what)
}

// replace writes a temporary file beside target, syncs it and renames it over target, so a
// reader sees the old file or the new one, never half of one.
func replace(target string, perm fs.FileMode, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, done, err := createTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return err
	}
	defer done()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil { // the file we made, whatever its name names now
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), target); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable; a file system that cannot sync a directory loses
// nothing it had promised.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// resolve follows path's symlinks (of the last element, as open does) to the file they name,
// which may not exist yet.
func resolve(path string) (string, error) {
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				return "", err
			}
			return p, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}
