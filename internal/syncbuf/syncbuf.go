// Package syncbuf is a bytes.Buffer that several goroutines may write and read at once: the
// output of a process a test started (its stdout and stderr are copied by exec's goroutines
// while the test reads), or of a ticker the test watches. It holds what it is given, unbounded:
// it is for tests and short-lived processes, never for a run's output.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent use. The zero value is empty and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
