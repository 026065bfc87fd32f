// Package servertime times a server from the kernel's clock, so that a load generator
// starved of CPU does not count its own wait as the server's.
//
// A Conn wraps the TCP connection that carries requests to the server (in mcpchaos, the
// fault relay's connection to the server: faults/shield_relay.go). It times each exchange of
// an HTTP/1.1 connection from the moment before the write of the request's last bytes to the
// moment the kernel received the reply's first byte (SO_TIMESTAMPNS: the kernel stamps each
// segment as it arrives, and a peek of one byte with recvmsg reads the stamp of the first
// segment waiting). However late the reading goroutine runs, the stamp is the arrival's.
//
// The send side is the process's clock read just before the write system call. A thread
// preempted between that read and the call would add its wait to the sample, so the clock is
// read again when the call returns and an exchange whose write took longer than MaxWriteSpan
// is not recorded (counted in Meter.Unsure instead): every recorded sample is late by less
// than MaxWriteSpan. What it measures is the server and everything between this connection and
// the server (an external proxy, the network); what it cannot know: a server on the same
// starved machine waits for a CPU too, and that wait is in its replies (docs/gate.md).
//
// Linux only; elsewhere Wrap returns the connection unmeasured (Supported is false).
package servertime
