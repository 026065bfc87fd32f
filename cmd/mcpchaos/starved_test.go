package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/results"
)

// starvedWorkload asks for far more calls than a shard pinned to one shared core at nice 10
// can make: 40 clients calling every 10 ms (4,000 calls a second), so its turns fall seconds
// behind whatever the machine's own load.
const starvedWorkload = `name: starved
target:
  builtin: {session_ttl: 60s}
phases:
  - {name: calls, duration: 8s, calls: true}
groups:
  - {name: probe, clients: 40, policy: probe, call_every: 10ms}
`

// A --procs run whose shards are starved says so: its shards (and the parent) pinned to one
// core with GOMAXPROCS=1 at nice 10, beside a CPU hog pinned to the same core, against a
// reference server left to the rest of the machine. The starvation is made large (the hog
// takes about nine tenths of the core, and the workload asks for about ten times what is
// left), so the test asserts the verdict, never a figure of time: the summary's first line
// after its title says STARVED, the exit status is 1 with "incomplete: the load generator
// was starved", and the merged export has both shards starved, the calls made late counted,
// and the one core counted once.
func TestProcsStarvedSaysSo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a starved --procs run for about half a minute")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("needs taskset (util-linux) to pin the run and the hog to one core")
	}
	bin, err := exec.LookPath("mcpchaos") // the test binary as mcpchaos, put on PATH by testscript.Main
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte(starvedWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startServer(t, bin, wl)
	startProcess(t, taskset, "-c", "0", "sh", "-c", "while :; do :; done") // the hog, ended by its PID

	out := filepath.Join(dir, "r.json")
	cmd := exec.Command(taskset, "-c", "0", "nice", "-n", "10", bin, "run", wl, "--procs", "2", "--target", url,
		"--out", out, "--progress", "off", "--formats", "none")
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	bound := time.AfterFunc(3*time.Minute, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }) // the run and its shards
	err = cmd.Wait()
	bound.Stop()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitRuntime {
		t.Fatalf("exit %v, want status 1; stdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "incomplete: the load generator was starved") {
		t.Errorf("stderr does not say the run is incomplete because its generator starved:\n%s", stderr.String())
	}
	lines := strings.Split(strings.TrimLeft(stdout.String(), "\n"), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "starved in 2 processes") || !strings.HasPrefix(lines[2], "STARVED: the load generator was starved") {
		t.Errorf("the summary's first lines do not say it starved:\n%s", stdout.String())
	}

	t.Logf("the summary's head:\n%s", strings.Join(lines[:min(len(lines), 4)], "\n"))
	exp, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	g := exp.Generator
	switch {
	case g == nil:
		t.Fatal("the merged export has no generator section")
	case !g.Starved || !g.MostlyStarved() || g.Shards != 2 || g.StarvedShards != 2:
		t.Errorf("generator: starved %v for %.1fs of %.1fs, %d of %d shards starved; want both, most of the run",
			g.Starved, g.StarvedS, g.Seconds, g.StarvedShards, g.Shards)
	case g.CPUs != 1:
		t.Errorf("generator.cpus %d: two shards on one core are one CPU", g.CPUs)
	}
	if c := exp.Overall.Causes; c == nil || c.CallsLate+c.SkippedWhileStarved == 0 {
		t.Errorf("no call counted late or skipped while starved: causes %+v", c)
	}
}

// startServer starts `mcpchaos serve --from WORKLOAD` on a free loopback port, unpinned, and
// returns its URL once it says where it listens; it is ended by its PID when the test ends.
func startServer(t *testing.T, bin, workload string) string {
	t.Helper()
	srv := exec.Command(bin, "serve", "--from", workload, "--addr", "127.0.0.1:0")
	pipe, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stopAtEnd(t, srv)
	line, err := bufio.NewReader(pipe).ReadString('\n')
	for _, f := range strings.Fields(line) {
		if strings.HasPrefix(f, "http://") {
			return f
		}
	}
	t.Fatalf("the reference server did not say where it listens: %q %v", line, err)
	return ""
}

// startProcess starts a command that runs until the test ends it, by its PID.
func startProcess(t *testing.T, name string, args ...string) {
	t.Helper()
	stopAtEnd(t, exec.Command(name, args...))
}

func stopAtEnd(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // a process this test started, by its PID
		_ = cmd.Wait()
	})
}
