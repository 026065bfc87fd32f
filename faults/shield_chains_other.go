//go:build !unix

package faults

import (
	"errors"
	"io"
	"syscall"
)

// readTo reads what the socket sends and writes it to w. Without unix's raw reads the read
// holds a pooled buffer while it waits.
func (s *side) readTo(w io.Writer) (int, error) {
	buf := chunks.Get().(*[]byte)
	defer chunks.Put(buf)
	n, err := s.conn.Read(*buf)
	if n > 0 {
		if !s.ends.server {
			s.noteRequest((*buf)[:n])
		}
		w.Write((*buf)[:n])
	}
	return n, err
}

// writeNow writes nothing: every chunk is queued for a flush.
func (s *side) writeNow(p []byte) (int, error) { return 0, nil }

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }
