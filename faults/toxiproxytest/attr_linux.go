package toxiproxytest

import "syscall"

// ChildAttr has the kernel kill a toxiproxy-server (SIGKILL, which also ends a stopped one)
// when the test process that started it dies without ending it: a test binary killed at its
// timeout, or a process group sent SIGTERM while a test held the server frozen (SIGSTOP), whose
// SIGTERM stays pending until a SIGCONT that never comes. Without it such a server is left
// behind, frozen, with init as its parent.
func ChildAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
