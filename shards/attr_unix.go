//go:build unix && !linux

package shards

import "syscall"

// childAttr puts a child process in a process group of its own (see attr_linux.go; there is
// no parent-death signal here).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
