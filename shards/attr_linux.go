package shards

import "syscall"

// childAttr puts a child process (a shard, the reference server) in a process group of its
// own, so that a terminal's Ctrl-C reaches only the parent, which passes it on once; and has
// the kernel send it SIGTERM if the parent dies without doing so (killed, SIGKILL).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
