//go:build unix && !linux

package main

import "syscall"

// childAttr puts a child process in a process group of its own (see procs_linux.go; there is
// no parent-death signal here).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
