package redact

import (
	"io"
)

// Reader passes r through with every secret replaced, as it is read. It holds back only a
// tail that could be the start of a secret in some encoding (never more than the longest
// encoding of a secret), so a stream's events are not delayed: an SSE event ends in a blank
// line, which starts none.
func (s *Set) Reader(r io.ReadCloser) io.ReadCloser {
	if s.Empty() {
		return r
	}
	return &reader{r: r, s: s}
}

type reader struct {
	r       io.ReadCloser
	s       *Set
	pending []byte // read, redacted, not yet returned
	held    int    // the last held bytes of pending may start a secret
	err     error  // from r, returned once pending is out
	scratch []byte
}

func (b *reader) Read(p []byte) (int, error) {
	for {
		if out := len(b.pending) - b.held; out > 0 || (b.err != nil && len(b.pending) > 0) {
			if b.err != nil {
				out = len(b.pending)
			}
			n := copy(p, b.pending[:out])
			b.pending = b.pending[n:]
			if len(b.pending) == 0 {
				b.pending = nil
			}
			return n, nil
		}
		if b.err != nil {
			return 0, b.err
		}
		if b.scratch == nil {
			b.scratch = make([]byte, 1<<10)
		}
		n, err := b.r.Read(b.scratch)
		b.pending = append(b.pending, b.scratch[:n]...)
		b.err = err
		b.pending, b.held = b.s.redact(b.pending, err == nil)
	}
}

func (b *reader) Close() error { return b.r.Close() }

// Writer redacts each write to w on its own (a secret split across two writes is not seen):
// for writers fed a line at a time, such as a run's stderr.
func (s *Set) Writer(w io.Writer) io.Writer {
	if s.Empty() {
		return w
	}
	return &writer{w: w, s: s}
}

type writer struct {
	w io.Writer
	s *Set
}

func (w *writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write([]byte(w.s.String(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}
