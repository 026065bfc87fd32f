//go:build unix

package faults

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// readTo reads what the socket sends into a pooled buffer taken only once the socket is
// readable (a held idle connection holds none), and writes it to w.
func (s *side) readTo(w io.Writer) (int, error) {
	raw, err := s.conn.SyscallConn()
	if err != nil {
		return 0, err
	}
	var buf *[]byte
	var n int
	var rerr error
	err = raw.Read(func(fd uintptr) bool {
		if !s.timer.Readable(int(fd)) { // the server's reply timed by the kernel's stamp (MeterServer)
			return false
		}
		buf = chunks.Get().(*[]byte)
		for {
			n, rerr = syscall.Read(int(fd), *buf)
			if rerr != syscall.EINTR {
				break
			}
		}
		if rerr == syscall.EAGAIN {
			chunks.Put(buf)
			buf = nil
			return false
		}
		return true
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		chunks.Put(buf)
		return 0, os.NewSyscallError("read", rerr)
	case n <= 0:
		chunks.Put(buf)
		return 0, io.EOF
	}
	if !s.ends.server {
		s.noteRequest((*buf)[:n])
	}
	w.Write((*buf)[:n])
	chunks.Put(buf)
	return n, nil
}

// writeNow writes what the socket takes of p without waiting for it to take more.
func (s *side) writeNow(p []byte) (int, error) {
	raw, err := s.conn.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	start := s.timer.BeforeWrite()
	defer s.timer.AfterWrite(start)
	err = raw.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), p)
			if werr != syscall.EINTR {
				return true
			}
		}
	})
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded): // a flush's bound, passed: the next flush writes
		return 0, nil
	case err != nil:
		return 0, err
	case werr == syscall.EAGAIN:
		return 0, nil
	case werr != nil:
		return 0, os.NewSyscallError("write", werr)
	}
	return n, nil
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }
