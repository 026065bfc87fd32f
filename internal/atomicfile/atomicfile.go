// Package atomicfile writes a file so that a reader never sees half of it: the exports, their
// companions, the report and inspect's fingerprint go through it. It writes regular files the
// tool was asked to write and nothing else.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write writes data to path through a temporary file in the same directory, synced, then
// renamed over path, so that a reader never sees half a file. Missing directories are made.
//
// It refuses to replace anything but a regular file: the tool runs as root, and a rename over a
// symlink, a device or a directory is never what was asked.
func Write(path string, data []byte) (err error) {
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is not a regular file (%s); give the path of a file to write", path, st.Mode().Type())
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
