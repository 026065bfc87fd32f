package toxiproxytest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A test process killed while its toxiproxy-server is frozen (SIGSTOP) leaves no server behind:
// the kernel kills it with its parent. The parent here is this test binary run again as a child
// that starts a server, freezes it, says its PID and waits to be killed (SIGKILL: no clean-up
// runs, as at a test binary's timeout).
func TestServerDiesWithItsTest(t *testing.T) {
	if os.Getenv("TOXIPROXYTEST_CHILD") == "1" {
		startFrozenAndWait(t)
		return
	}
	if _, err := Binary(); err != nil {
		t.Skip(err)
	}
	child := exec.Command(os.Args[0], "-test.run", "^TestServerDiesWithItsTest$", "-test.v")
	child.Env = append(os.Environ(), "TOXIPROXYTEST_CHILD=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	hold, err := child.StdinPipe() // the child waits on it: ended by Kill, or by our exit
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }() // our own child, by its PID
	server := 0
	for sc := bufio.NewScanner(out); server == 0 && sc.Scan(); {
		if s, ok := strings.CutPrefix(sc.Text(), "frozen server "); ok {
			server, _ = strconv.Atoi(s)
		}
	}
	if server == 0 {
		t.Fatal("the child never said it had frozen a server")
	}
	if st := procState(server); st != "T" {
		t.Fatalf("the server %d is in state %q, want T (stopped)", server, st)
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	// The parent-death signal is sent as the child exits; its delivery is the kernel's, so
	// poll (bounded) until the server is gone or a zombie waiting for init to reap it.
	for i := 0; i < 3000; i++ {
		if st := procState(server); st == "" || st == "Z" || st == "X" {
			return
		}
		time.Sleep(10 * time.Millisecond) // a bounded poll of /proc
	}
	st := procState(server)
	_ = syscall.Kill(server, syscall.SIGKILL) // left behind: end it ourselves, by its PID
	t.Fatalf("the toxiproxy-server %d outlived the test process that froze it (state %s)", server, st)
}

// startFrozenAndWait is the child: a server started by Start, frozen, its PID printed.
func startFrozenAndWait(t *testing.T) {
	Start(t)
	pid := childOf(os.Getpid())
	if pid == 0 {
		t.Fatal("no child process found")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3000 && procState(pid) != "T"; i++ {
		time.Sleep(time.Millisecond) // a bounded poll: the stop is delivered asynchronously
	}
	fmt.Printf("frozen server %d\n", pid)
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent kills us (or it exits: EOF)
}

// childOf is the PID of a child of parent, from /proc, or 0.
func childOf(parent int) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its last ')'.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(parent) {
			pid, _ := strconv.Atoi(strings.Fields(string(b))[0])
			return pid
		}
	}
	return 0
}

// procState is a process's state letter (R, S, T, Z...), or "" if it is gone.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
