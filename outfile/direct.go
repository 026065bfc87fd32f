package outfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Devices and FIFOs are written in place, and a FIFO is the one output whose writing can wait
// on another process: its reader may never come, or come and never read. So a FIFO is opened
// when it is checked, before any work (a FIFO nobody reads is refused then, not after the run),
// and held open until written: closing it in between would give its reader an end of file. A
// write makes progress or ends within Stall, ends at once when its context is cancelled (the
// first signal), and what it could not write goes to a regular file beside the FIFO, named so
// (Diverted): an export is never lost.

// Stall bounds how long a write to a device or a FIFO may go without progress.
var Stall = 10 * time.Second

// held are the FIFOs Check opened, by the path of the FIFO, until Write takes them: the
// process's own open files, not configuration.
var held struct {
	sync.Mutex
	files map[string]*os.File
}

// openFIFO opens the FIFO at target for writing without waiting: ENXIO says no process has it
// open for reading.
func openFIFO(shown, target string) (*os.File, error) {
	f, err := os.OpenFile(target, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return nil, fmt.Errorf("%s: no process reads this FIFO; start its reader first (e.g. cat %s > copy.json &)", shown, shown)
	}
	return f, err
}

// hold opens the FIFO at target now and keeps it for the write.
func hold(shown, target string) error {
	held.Lock()
	defer held.Unlock()
	if _, ok := held.files[target]; ok {
		return nil
	}
	f, err := openFIFO(shown, target)
	if err != nil {
		return err
	}
	if held.files == nil {
		held.files = map[string]*os.File{}
	}
	held.files[target] = f
	return nil
}

// take is the FIFO held for target, or nil; it is no longer held.
func take(target string) *os.File {
	held.Lock()
	defer held.Unlock()
	f := held.files[target]
	delete(held.files, target)
	return f
}

// Diverted says a device or a FIFO could not take what was written to it, and where it went.
type Diverted struct {
	Path string // the device or FIFO asked for
	To   string // the regular file written instead ("" if that failed too)
	Err  error  // why Path could not take it
}

func (e *Diverted) Error() string {
	if e.To == "" {
		return fmt.Sprintf("%s: %v; writing it elsewhere failed too", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: %v; written to %s instead", e.Path, e.Err, e.To)
}

func (e *Diverted) Unwrap() error { return e.Err }

// DivertedPath is where what could not be written to the device or FIFO at path goes: beside
// a FIFO, with ".unread" before its extension; for a device, in ./mcpchaos-results (a device's
// directory, /dev, is no place for a file), with ".unwritten".
func DivertedPath(path string, fifo bool) string {
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	if fifo {
		return filepath.Join(filepath.Dir(path), stem+".unread"+ext)
	}
	return filepath.Join("mcpchaos-results", stem+".unwritten"+ext)
}

func writeDirect(ctx context.Context, path, target string, fifo bool, write func(io.Writer) error) error {
	f := take(target)
	var err error
	if f == nil {
		if fifo {
			f, err = openFIFO(target, target)
		} else {
			// O_NONBLOCK: a device that blocks (a terminal held by flow control) is polled,
			// so that Stall bounds it too; a plain device ignores the flag.
			f, err = os.OpenFile(target, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		}
	}
	if err == nil {
		err = writeBounded(ctx, f, write)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		return nil
	}
	d := &Diverted{Path: path, Err: explain(err)}
	to := DivertedPath(path, fifo)
	if werr := WriteWith(to, nil, write); werr == nil {
		d.To = to
	}
	return d
}

// explain turns the errors of a bounded write into what happened.
func explain(err error) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("nothing read it for %s", Stall)
	case errors.Is(err, context.Canceled):
		return errors.New("writing it was interrupted by a signal")
	case errors.Is(err, syscall.EPIPE):
		return errors.New("its reader closed it before the end")
	}
	return err
}

// writeBounded runs write on f through a writer whose every chunk must go through within
// Stall, and which stops when ctx is done.
func writeBounded(ctx context.Context, f *os.File, write func(io.Writer) error) error {
	bw := &boundedWriter{f: f, ctx: ctx}
	stop := context.AfterFunc(ctx, func() {
		bw.mu.Lock()
		defer bw.mu.Unlock()
		bw.stopped = true
		_ = f.SetWriteDeadline(time.Unix(1, 0)) // a write in progress returns now
	})
	defer stop()
	if err := write(bw); err != nil {
		if bw.err != nil {
			return bw.err
		}
		return err
	}
	return nil
}

type boundedWriter struct {
	f       *os.File
	ctx     context.Context
	mu      sync.Mutex
	stopped bool
	err     error // the first write error, which write may have wrapped
}

// chunk is how much goes in one write: a pipe's buffer is 64 KiB, so each chunk proves the
// reader is still reading.
const chunk = 64 << 10

func (w *boundedWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		w.mu.Lock()
		if w.stopped {
			w.mu.Unlock()
			w.err = context.Canceled
			return n, w.err
		}
		_ = w.f.SetWriteDeadline(time.Now().Add(Stall)) // a device that cannot poll ignores it
		w.mu.Unlock()
		m, err := w.f.Write(p[n:min(len(p), n+chunk)])
		n += m
		if err != nil {
			if w.ctx.Err() != nil {
				err = context.Canceled
			}
			w.err = err
			return n, err
		}
	}
	return n, nil
}
