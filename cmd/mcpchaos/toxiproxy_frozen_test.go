package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/hostile"
)

// If Toxiproxy itself cannot answer (a toxiproxy-server frozen mid-run, SIGSTOP), the run says
// so: the fault it could not apply, that Toxiproxy did not answer, and which connections were
// stalled on their clients (none here: our clients read), and it exits non-zero with an export.
func TestRunSaysToxiproxyDidNotAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of about 10 s")
	}
	api, pid := frozenToxiproxy(t)
	h := hostile.New(t)
	dir := t.TempDir()
	// Freeze the server once the run's clients connect through its group's proxy (groupProxy:
	// before the first fault, 2.5 s into the run, after every step of the set-up). Not as soon
	// as the proxy is listed: Toxiproxy lists it before it has answered the run's request to
	// make it, and a server frozen in between left the set-up waiting (a busy machine's flake).
	frozen := make(chan struct{})
	go func() {
		defer close(frozen)
		if p, err := groupProxy(api); err == nil {
			connectedTo(p.Listen)
		}
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}()
	out := runCmd(t, dir, "run", filepath.Join("testdata", "toxiproxy-frozen.yaml"), "--target", h.URL("get-405"), "--toxiproxy", api,
		"--progress", "off", "--out", filepath.Join(dir, "r.json"))
	<-frozen
	_ = syscall.Kill(pid, syscall.SIGCONT)
	for _, want := range []string{"fault cut: abandoned: Toxiproxy did not answer in time", "Toxiproxy itself did not answer"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run does not say %q", want)
		}
	}
	if !strings.Contains(out, "mcpchaos:") {
		t.Errorf("the run ended without an error")
	}
}

// connectedTo waits (bounded: 30 s) until a connection to the loopback address listen is
// established, as the kernel's table of TCP connections shows it.
func connectedTo(listen string) {
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		return
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return
	}
	local := fmt.Sprintf(":%04X ", n) // local_address ends in the port, in hex; state 01 is ESTABLISHED
	for i := 0; i < 3000; i++ {
		for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
			b, _ := os.ReadFile(table)
			for _, line := range strings.Split(string(b), "\n") {
				f := strings.Fields(line)
				if len(f) > 3 && strings.HasSuffix(f[1]+" ", local) && f[3] == "01" {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond) // a bounded poll of the kernel's table
	}
}
