//go:build !linux

package servertime

import (
	"errors"
	"net"
)

// Supported reports whether connections can be timed on this system.
const Supported = false

// Conn is a TCP connection whose exchanges are timed; never made on this system.
type Conn struct{ TCP *net.TCPConn }

func (c *Conn) Read(p []byte) (int, error)  { return c.TCP.Read(p) }
func (c *Conn) Write(p []byte) (int, error) { return c.TCP.Write(p) }

// Timer times a connection's exchanges; never made on this system, and a nil Timer does nothing.
type Timer struct{}

// NewTimer fails on this system: kernel receive timestamps are read on Linux only.
func NewTimer(*net.TCPConn, *Meter) (*Timer, error) {
	return nil, errors.New("servertime: kernel receive timestamps are read on Linux only")
}

func (t *Timer) BeforeWrite() int64   { return 0 }
func (t *Timer) AfterWrite(int64)     {}
func (t *Timer) Readable(fd int) bool { return true }

// Wrap fails on this system: kernel receive timestamps are read on Linux only.
func Wrap(*net.TCPConn, *Meter) (*Conn, error) {
	return nil, errors.New("servertime: kernel receive timestamps are read on Linux only")
}
