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

// Timer times one connection's exchanges (see the package doc) for code that does its own
// reads and writes on the socket: BeforeWrite and AfterWrite around each write of a request's
// bytes, Readable before each read. A nil Timer does nothing.
type Timer struct {
	m   *Meter
	ex  exchange
	oob []byte // the reader's control-message buffer
}

// NewTimer turns on the kernel's receive timestamps on c and returns its timer. On an error (a
// kernel without SO_TIMESTAMPNS) it returns nil and the error: use c unmeasured.
func NewTimer(c *net.TCPConn, m *Meter) (*Timer, error) {
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
	return &Timer{m: m, oob: make([]byte, unix.CmsgSpace(16)*2)}, nil
}

// BeforeWrite is called just before a write of request bytes; its result goes to AfterWrite.
func (t *Timer) BeforeWrite() int64 {
	if t == nil {
		return 0
	}
	start := time.Now().UnixNano()
	t.ex.beforeWrite(start)
	return start
}

// AfterWrite is called when that write returned.
func (t *Timer) AfterWrite(start int64) {
	if t != nil {
		t.ex.afterWrite(start, time.Now().UnixNano(), t.m)
	}
}

// Readable is called, from a syscall.RawConn's Read callback, with the socket's descriptor
// before the read: when a reply is awaited it peeks one byte for the kernel's arrival stamp. It
// reports false when the socket had nothing to read after all (EAGAIN: wait again).
func (t *Timer) Readable(fd int) bool {
	if t == nil || !t.ex.awaiting() {
		return true
	}
	stamp, err := t.peekStamp(fd)
	switch {
	case errors.Is(err, unix.EAGAIN):
		return false
	case stamp != 0:
		t.ex.arrived(stamp, t.m)
	case err == nil:
		t.ex.unstamped(t.m)
	}
	return true
}

// Conn is a TCP connection whose exchanges are timed (see the package doc). Its Read and
// Write replace the TCPConn's; everything else (deadlines, Close, CloseWrite, SetLinger) is
// done on TCP.
type Conn struct {
	TCP *net.TCPConn
	raw syscall.RawConn
	t   *Timer
}

// Wrap turns on the kernel's receive timestamps on c and returns it timed by m. On an error
// (a kernel without SO_TIMESTAMPNS) it returns nil and the error: use c unmeasured.
func Wrap(c *net.TCPConn, m *Meter) (*Conn, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	t, err := NewTimer(c, m)
	if err != nil {
		return nil, err
	}
	return &Conn{TCP: c, raw: raw, t: t}, nil
}

// Write writes p, timing the exchange it belongs to from just before the call.
func (c *Conn) Write(p []byte) (int, error) {
	start := c.t.BeforeWrite()
	n, err := c.TCP.Write(p)
	c.t.AfterWrite(start)
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
		if !c.t.Readable(int(fd)) {
			return false
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
func (t *Timer) peekStamp(fd int) (int64, error) {
	var one [1]byte
	n, oobn, _, _, err := unix.Recvmsg(fd, one[:], t.oob, unix.MSG_PEEK)
	if err != nil {
		return 0, err
	}
	if n == 0 { // the end of the stream: no reply
		return 0, errEnd
	}
	msgs, err := unix.ParseSocketControlMessage(t.oob[:oobn])
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
