//go:build !linux

package toxiproxytest

import "syscall"

// ChildAttr is nil where the kernel has no parent-death signal (see attr_linux.go): there a
// server outlives a test process killed before its clean-up.
func ChildAttr() *syscall.SysProcAttr { return nil }
