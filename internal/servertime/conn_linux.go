package servertime

import (
	"errors"
	"io"
	"net"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported reports whether connections can be timed on this system.
const Supported = true

// Conn is a TCP connection whose exchanges are timed (see the package doc). Its Read and
// Write replace the TCPConn's; everything else (deadlines, Close, CloseWrite, SetLinger) is
// done on TCP.
type Conn struct {
	TCP *net.TCPConn
	raw syscall.RawConn
	m   *Meter
	ex  exchange
	oob []byte // the reader's control-message buffer
}

// Wrap turns on the kernel's receive timestamps on c and returns it timed by m. On an error
// (a kernel without SO_TIMESTAMPNS) it returns nil and the error: use c unmeasured.
func Wrap(c *net.TCPConn, m *Meter) (*Conn, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, serr
	}
	return &Conn{TCP: c, raw: raw, m: m, oob: make([]byte, unix.CmsgSpace(16)*2)}, nil
}

// Write writes p, timing the exchange it belongs to from just before the call.
func (c *Conn) Write(p []byte) (int, error) {
	start := time.Now().UnixNano()
	c.ex.beforeWrite(start)
	n, err := c.TCP.Write(p)
	c.ex.afterWrite(start, time.Now().UnixNano(), c.m)
	return n, err
}

// Read reads as TCPConn.Read does; the first read of an awaited reply first peeks one byte to
// learn the kernel's arrival stamp of the segment that holds it.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := c.raw.Read(func(fd uintptr) bool {
		if c.ex.awaiting() {
			stamp, err := c.peekStamp(int(fd))
			if errors.Is(err, unix.EAGAIN) {
				return false
			}
			if stamp != 0 {
				c.ex.arrived(stamp, c.m)
			} else if err == nil {
				c.ex.unstamped(c.m)
			}
		}
		n, rerr = unix.Read(int(fd), p)
		return !errors.Is(rerr, unix.EAGAIN) // not yet readable: wait again
	})
	switch {
	case err != nil:
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.TCP.LocalAddr(), Addr: c.TCP.RemoteAddr(), Err: err}
	case rerr != nil:
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.TCP.LocalAddr(), Addr: c.TCP.RemoteAddr(), Err: rerr}
	case n <= 0:
		return 0, io.EOF
	}
	return n, nil
}

// errEnd is peekStamp's end of stream, which is no exchange's end: the read that follows says it.
var errEnd = errors.New("end of stream")

// peekStamp peeks the first waiting byte and returns the kernel's arrival stamp of its
// segment (unix ns), or 0 when the kernel stamped none (it turns stamping on for the whole
// machine a moment after the first socket asks: segments that arrived before are unstamped).
func (c *Conn) peekStamp(fd int) (int64, error) {
	var one [1]byte
	n, oobn, _, _, err := unix.Recvmsg(fd, one[:], c.oob, unix.MSG_PEEK)
	if err != nil {
		return 0, err
	}
	if n == 0 { // the end of the stream: no reply
		return 0, errEnd
	}
	msgs, err := unix.ParseSocketControlMessage(c.oob[:oobn])
	if err != nil {
		return 0, nil
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
			ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0])) // the kernel's struct timespec, native layout
			return ts.Nano(), nil
		}
	}
	return 0, nil
}
