package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/results"
)

const fifoWorkload = `name: fifo
target:
  builtin:
    session_ttl: 30s
phases:
  - {name: a, duration: 1s, calls: true}
groups:
  - {name: g, policy: naive, clients: 2, call_every: 50ms}
`

// An export to a FIFO: refused before the run when no process reads it; and when its reader
// never reads, the first signal while it is written ends the write, and the export goes beside
// the FIFO under a name that says so. The built binary runs on loopback; every wait is on an
// event (a line it prints, its exit), bounded.
func TestRunExportToFIFO(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("mcpchaos")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte(fifoWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "out.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}

	// Nobody has it open: a usage error before anything starts.
	start := time.Now()
	out, err := exec.Command(bin, "run", wl, "--out", fifo, "--progress", "off").CombinedOutput()
	if code := exitOf(err); code != exitUsage || !strings.Contains(string(out), "no process reads this FIFO") || strings.Contains(string(out), "sessions started") {
		t.Fatalf("exit %d, want 2 before the run; output:\n%s", code, out)
	}
	t.Logf("refused in %v", time.Since(start))

	// A reader that never reads, with a pipe buffer of one page: the export blocks.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const fSetPipeSize = 1031 // F_SETPIPE_SZ
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), fSetPipeSize, 4096); e != 0 {
		t.Skipf("cannot shrink the pipe: %v", e)
	}
	cmd := exec.Command(bin, "run", wl, "--out", fifo, "--progress", "off")
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	bound := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer bound.Stop()
	sc := bufio.NewScanner(stdout)
	summarised := false
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "transport errors") { // the summary's last line: the export is next
			summarised = true
			break
		}
	}
	if !summarised {
		t.Fatalf("no summary; stderr:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	err = cmd.Wait()
	if !bound.Stop() {
		t.Fatalf("still writing to the FIFO 60s after the start; killed. stderr:\n%s", stderr.String())
	}
	diverted := filepath.Join(dir, "out.unread.json")
	if code := exitOf(err); code == exitOK || !strings.Contains(stderr.String(), "written to "+diverted+" instead") {
		t.Errorf("exit %d, want non-zero naming %s; stderr:\n%s", code, diverted, stderr.String())
	}
	t.Logf("stderr: %s", stderr.String())
	b, err := os.ReadFile(diverted)
	var e results.Export
	if err != nil || json.Unmarshal(b, &e) != nil || e.Run.Workload != "fifo" {
		t.Fatalf("the diverted export: %v, %d bytes", err, len(b))
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", err)
	}
}

func exitOf(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
