package outfile

import (
	"os"
	"path/filepath"
	"sync"
)

// A process that ends at once (a second Ctrl-C or SIGTERM) must not leave a temporary file or
// directory beside the outputs: the export being written when it came is lost, but nothing
// half-written stays. So every temporary this package makes is created and recorded under
// one lock, removed from the record when it is renamed into place or removed, and
// RemoveInFlight removes what is left and keeps the lock: a temporary is never made after it.

var inFlight struct {
	mu    sync.Mutex
	ended bool
	paths map[string]string // temporary path -> the extension of a directory's files ("" for a file)
}

// createTemp is os.CreateTemp, recorded until done is called.
func createTemp(dir, pattern string) (f *os.File, done func(), err error) {
	inFlight.mu.Lock()
	defer inFlight.mu.Unlock()
	if f, err = os.CreateTemp(dir, pattern); err != nil {
		return nil, nil, err
	}
	return f, track(f.Name(), ""), nil
}

// mkdirTemp is os.MkdirTemp for a directory of files ending in ext, recorded until done.
func mkdirTemp(dir, pattern, ext string) (name string, done func(), err error) {
	inFlight.mu.Lock()
	defer inFlight.mu.Unlock()
	if name, err = os.MkdirTemp(dir, pattern); err != nil {
		return "", nil, err
	}
	return name, track(name, ext), nil
}

// track records path; the caller holds the lock.
func track(path, ext string) func() {
	if inFlight.paths == nil {
		inFlight.paths = map[string]string{}
	}
	inFlight.paths[path] = ext
	return func() {
		inFlight.mu.Lock()
		defer inFlight.mu.Unlock()
		delete(inFlight.paths, path)
	}
}

// RemoveInFlight removes the temporary files and directories being written now, for a process
// about to exit at once; from then on no temporary is made (the next one waits for the exit).
// Call it only on the way out.
func RemoveInFlight() {
	inFlight.mu.Lock() // held until the process exits
	if inFlight.ended {
		return
	}
	inFlight.ended = true
	for p, ext := range inFlight.paths {
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			_ = removeOwn(p, ext)
			continue
		}
		_ = os.Remove(filepath.Clean(p))
	}
}
