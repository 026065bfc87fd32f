package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/mcpchaos/mcpchaos/faults/toxiproxytest"
	"github.com/mcpchaos/mcpchaos/outfile"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/shards"
)

// procsWorkload runs long enough that every signal of the matrix comes mid-run; the reference
// server runs as a child process of its own (the `serve` child).
const procsWorkload = `name: sigmatrix
target:
  builtin:
    session_ttl: 400ms
    notify_interval: 50ms
    retry: 20ms
phases:
  - {name: active, duration: 60s, calls: true}
groups:
  - {name: naive, policy: naive, clients: 2, call_every: 50ms}
  - {name: probe, policy: probe, probe: ping, clients: 2, call_every: 50ms}
faults:
  - {name: out, toxic: down, at: 300ms, for: 300ms}
`

// A --procs 2 run with an external toxiproxy-server behaves like a single run for every
// signal pattern: one or two SIGINTs, to the parent alone or to its whole process group (a
// terminal's Ctrl-C), while the shards set up or mid-run. It always exits 130; it leaves no
// proxy on the server and no child process (shards, `serve`) running; a single signal mid-run
// leaves a merged export of both shards, marked interrupted. The built binary runs on loopback;
// every wait is on an event (a line the process prints, its exit), bounded. A third row sends
// the signals at a random moment from set-up into the run, as a user would.
func TestProcsSignalMatrix(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("mcpchaos") // the test binary as mcpchaos, put on PATH by testscript.Main
	if err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"setup", "midrun", "random"} {
		for _, to := range []string{"parent", "group"} {
			for _, n := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/%s/%dx", when, to, n), func(t *testing.T) {
					t.Parallel()
					signalProcsRun(t, bin, when, to, n)
				})
			}
		}
	}
}

func signalProcsRun(t *testing.T, bin, when, to string, n int) {
	api := toxiproxytest.Start(t) // a server per case: "no proxy left" is about this run alone
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte(procsWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	// An earlier run's shard exports: never merged into this one.
	stale := filepath.Join(dir, "r.shards", "shard-1.json")
	os.MkdirAll(filepath.Dir(stale), 0o755)
	os.WriteFile(stale, []byte(`{"earlier_run": true}`), 0o644)
	cmd := exec.Command(bin, "run", wl, "--procs", "2", "--toxiproxy", api, "--out", out, "--progress", "json")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group of its own, as a shell's job
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	var stderr strings.Builder
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			select {
			case lines <- sc.Text():
			default: // nobody waits for lines any more
			}
		}
	}()
	exited := make(chan error, 1)
	bound := time.AfterFunc(90*time.Second, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer bound.Stop()

	if !waitLine(lines, when) { // "random": the set-up line, then a random moment
		err := cmd.Wait()
		t.Fatalf("no %s event before exit (%v); stderr:\n%s", when, err, stderr.String())
	}
	if when == "random" {
		// The interrupt itself, not a synchronisation: from set-up to the first seconds of the
		// run (the shards start 3 s after the set-up line).
		after := time.Duration(rand.Int64N(int64(5 * time.Second)))
		t.Logf("interrupt %v after the set-up line", after)
		<-time.After(after)
	}
	pid := cmd.Process.Pid
	if to == "group" {
		pid = -pid
	}
	for i := range n {
		if i > 0 {
			// The second interrupt itself, not a synchronisation: past the window within which
			// the same signal again counts as the first (main's repeatWindow, 500 ms), as a
			// user's second Ctrl-C. The run may have ended by then.
			<-time.After(600 * time.Millisecond)
		}
		if err := syscall.Kill(pid, syscall.SIGINT); err != nil && (i == 0 || !errors.Is(err, syscall.ESRCH)) {
			t.Fatal(err)
		}
	}
	go func() {
		for range lines { // drain until the process closes its stderr
		}
		exited <- cmd.Wait()
	}()
	err = <-exited
	if !bound.Stop() {
		t.Fatalf("still running 90s after the start; killed. stderr:\n%s", stderr.String())
	}
	var ee *exec.ExitError
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || (err != nil && !errors.As(err, &ee)) {
		t.Errorf("exit %d (%v), want 130; stderr:\n%s", code, err, stderr.String())
	}
	if strings.Contains(stderr.String(), "failed: \n") || strings.Contains(stderr.String(), "panic") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	checkProcsExport(t, out, when, n, stdout.String(), stderr.String())
	if b, err := os.ReadFile(stale); err == nil && strings.Contains(string(b), "earlier_run") {
		t.Error("an earlier run's shard export is still there, to be merged as this run's")
	}
	checkNothingLeft(t, api, dir)
}

// waitLine waits for the line that says the run reached when: the shards started and setting
// up, or the status line of sessions live.
func waitLine(lines <-chan string, when string) bool {
	for line := range lines {
		switch when {
		case "setup", "random":
			if strings.Contains(line, "shard processes setting up") {
				return true
			}
		case "midrun":
			if st, ok := shards.ParseStatus(line); ok && len(st.Groups) > 1 && st.Groups[0].Live > 0 && st.Groups[1].Live > 0 {
				return true
			}
		}
	}
	return false
}

func checkProcsExport(t *testing.T, out, when string, n int, stdout, stderr string) {
	t.Helper()
	_, err := os.Stat(out)
	if when == "midrun" && n == 1 && err != nil {
		t.Fatalf("a single interrupt mid-run left no export: %v; stdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if err != nil {
		return // set-up or a second signal: nothing to merge, as for a single run
	}
	exp, err := results.ReadFile(out)
	if err != nil {
		t.Fatalf("export does not read: %v", err)
	}
	if !exp.Run.Interrupted {
		t.Error("the merged export is not marked interrupted")
	}
	got := len(exp.Run.MergedShards)
	if when == "midrun" && n == 1 && got != 2 {
		t.Errorf("merged %d shards, want both (they were running); notes %v", got, exp.Run.Notes)
	}
	if got < 2 && !strings.Contains(strings.Join(exp.Run.Notes, " "), "not in this merge") {
		t.Errorf("merged %d of 2 shards and does not say which are missing: notes %v", got, exp.Run.Notes)
	}
	if n == 1 {
		if _, err := os.Stat(outfile.Marker(out)); err == nil {
			t.Error("the set of a drained run is marked incomplete")
		}
	}
}

// checkNothingLeft: no proxy on the server, no temporary file or directory beside the outputs
// (a second signal during the export removes what was half-written), and no process whose
// command line names this case's directory (the shards and `serve` all do: the workload's path).
func checkNothingLeft(t *testing.T, api, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary %s left", p)
		}
		return nil
	})
	proxies, err := toxiclient.NewClient(strings.TrimPrefix(api, "http://")).Proxies()
	if err != nil {
		t.Fatalf("listing the server's proxies: %v", err)
	}
	for name := range proxies {
		t.Errorf("proxy %s left on the server", name)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(dir)) {
			pid := filepath.Base(filepath.Dir(p))
			t.Errorf("process %s still running: %s", pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
			if id := atoiOr(pid); id > 0 {
				_ = syscall.Kill(id, syscall.SIGKILL) // a leak of this test's own run
			}
		}
	}
}

func atoiOr(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}
