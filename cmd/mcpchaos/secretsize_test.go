package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpchaos/mcpchaos/workloads"
)

// maxSetupRSS is what run and inspect may hold before they dial, whatever secrets they were
// given within workloads.MaxSecretBytes (issue 30: a 900 KB header took 1.6 GB).
const maxSetupRSS = 256 << 20

// secretsizes run|inspect N: N header values of random sizes up to workloads.MaxSecretBytes
// (random text, some of it words, each a secret of its own), given through the environment
// to a target that refuses connections: each process peaks under maxSetupRSS and fails only
// at the dial; one value past the limit is refused (exit 2) naming the --header.
func cmdSecretSizes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 || (args[0] != "run" && args[0] != "inspect") {
		ts.Fatalf("usage: secretsizes run|inspect N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	bin, err := lookPath(ts, "mcpchaos")
	ts.Check(err)
	launcher, err := lookPath(ts, "peakrss")
	ts.Check(err)
	seed := rand.Uint64()
	ts.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 30))
	sizes := []int{workloads.MaxSecretBytes + 1 + r.IntN(64<<10)}
	for range n {
		sizes = append(sizes, 1+r.IntN(workloads.MaxSecretBytes-len("Bearer ")))
	}
	for i, size := range sizes {
		value := secretValue(r, size)
		argv := []string{"inspect", "http://127.0.0.1:1/mcp", "--header", "X-Big: ${BIG_VALUE}"}
		if args[0] == "run" {
			argv = []string{"run", "w.yaml", "--target", "http://127.0.0.1:1/mcp", "--header", "X-Big: ${BIG_VALUE}", "--progress", "off", "--out", "r.json"}
		}
		rssFile := filepath.Join(ts.Getenv("WORK"), "peak-rss")
		cmd := exec.Command(launcher, append([]string{bin}, argv...)...)
		cmd.Dir = ts.Getenv("WORK")
		cmd.Env = []string{"PATH=" + ts.Getenv("PATH"), "HOME=" + ts.Getenv("WORK"), "TMPDIR=" + ts.Getenv("WORK"), "BIG_VALUE=" + value, "PEAKRSS_OUT=" + rssFile}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[0], err)
		}
		kib, err := os.ReadFile(rssFile)
		ts.Check(err)
		rss, err := strconv.ParseInt(string(kib), 10, 64)
		ts.Check(err)
		rss <<= 10
		code := cmd.ProcessState.ExitCode()
		ts.Logf("%s: header value of %d bytes: exit %d, peak RSS %d MiB", args[0], len(value), code, rss>>20)
		switch {
		case rss > maxSetupRSS:
			ts.Fatalf("%s with a header value of %d bytes peaked at %d MiB, over %d MiB", args[0], len(value), rss>>20, maxSetupRSS>>20)
		case i == 0 && (code != exitUsage || !strings.Contains(stderr.String(), "--header X-Big") || !strings.Contains(stderr.String(), "limit of 65536")):
			ts.Fatalf("%s with a header value of %d bytes (over the limit): exit %d, want 2 naming --header X-Big and the limit:\n%s", args[0], len(value), code, stderr.String())
		case i > 0 && code != exitRuntime:
			ts.Fatalf("%s with a header value of %d bytes: exit %d, want 1 (the target refuses connections):\n%s", args[0], len(value), code, stderr.String())
		}
	}
}

// peakRSS (the script command peakrss PROG ARGS...) runs PROG and writes its peak RSS in KiB,
// from wait4, to $PEAKRSS_OUT, then exits with PROG's status. It is a fresh, small process of
// its own: Linux counts the parent's memory in the peak of a child started by vfork (as Go
// starts commands) until the child execs, so a command started straight from this test binary,
// grown to hundreds of MiB by the tests before it, would report the test binary's size.
func peakRSS() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(127)
	}
	kib := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
	if err := os.WriteFile(os.Getenv("PEAKRSS_OUT"), []byte(strconv.FormatInt(kib, 10)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(127)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}

// secretValue is a header value of n bytes: a "Bearer " prefix, then printable text with a
// space now and then (words of eight or more characters are secrets of their own).
func secretValue(r *rand.Rand, n int) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/=%\"'<>&"
	var b strings.Builder
	b.WriteString("Bearer ")
	for b.Len() < n {
		if r.IntN(12) == 0 {
			b.WriteByte(' ')
			continue
		}
		b.WriteByte(chars[r.IntN(len(chars))])
	}
	return strings.TrimSpace(b.String())
}

// lookPath finds name on the script's PATH.
func lookPath(ts *testscript.TestScript, name string) (string, error) {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not on the script's PATH", name)
}
