package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/tsworker"
)

// tsWorkload has a Go library group and both TypeScript ones, for a couple of seconds.
const tsWorkload = `name: ts-outside
target:
  builtin: {session_ttl: 3s, notify_interval: 100ms}
phases:
  - {name: active, duration: 2s, calls: true}
groups:
  - {name: gosdk, clients: 2, policy: gosdk, call_every: 200ms}
  - {name: ts-sdk, clients: 2, policy: ts-sdk, call_every: 200ms}
  - {name: ts-client, clients: 2, policy: ts-client, call_every: 200ms}
faults:
  - {name: slow-ts, toxic: latency, attributes: {latency: 5}, at: 1s, for: 500ms, groups: [ts-sdk]}
`

// A binary built as the container image's is (-trimpath, like go install: no source path to
// find anything through) and run from a directory of its own: without the TypeScript libraries,
// or without node (the image has none), matrix measures the Go library, says which groups it
// left out and what to run, and exits 0; with them (an installation holding only
// node_modules), run starts its node workers from the script embedded in the binary.
func TestTSWorkerFromATrimmedBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: not under -short")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin", "mcpchaos")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// As deploy/kubernetes/Dockerfile builds the image's binary.
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -trimpath: %v\n%s", err, out)
	}
	elsewhere := filepath.Join(tmp, "elsewhere")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "ts.yaml"), []byte(tsWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	mcpchaos := func(env []string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = elsewhere
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil && cmd.ProcessState == nil {
			t.Fatalf("mcpchaos %v: %v", args, err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}

	// Nothing installed: a fresh user's cache, no MCPCHAOS_TS_WORKER_DIR.
	fresh := []string{"XDG_CACHE_HOME=" + filepath.Join(tmp, "cache"), tsworker.EnvDir + "="}
	out, code := mcpchaos(fresh, "matrix", "ts.yaml", "--out", "m.json", "--progress", "off")
	if code != 0 || !strings.Contains(out, "modelcontextprotocol/go-sdk@") ||
		!strings.Contains(out, "not measured: ts-sdk, ts-client (the TypeScript libraries are not installed: run `mcpchaos setup ts-libraries`") {
		t.Fatalf("matrix without the TypeScript libraries: exit %d, want 0, the Go row and what to run:\n%s", code, out)
	}
	out, code = mcpchaos(fresh, "run", "ts.yaml", "--out", "r.json", "--progress", "off")
	if code != exitUsage || !strings.Contains(out, "mcpchaos setup ts-libraries") {
		t.Fatalf("run of ts-sdk without the libraries: exit %d, want %d and what to run:\n%s", code, exitUsage, out)
	}
	// No node at all, as in the container image (distroless): the same, for that reason.
	noNode := append([]string{"PATH=" + filepath.Join(tmp, "bin")}, fresh...)
	out, code = mcpchaos(noNode, "matrix", "ts.yaml", "--out", "m.json", "--progress", "off")
	if code != 0 || !strings.Contains(out, "modelcontextprotocol/go-sdk@") || !strings.Contains(out, "not measured: ts-sdk, ts-client (node is not installed") {
		t.Fatalf("matrix without node: exit %d, want 0, the Go row and why:\n%s", code, out)
	}

	// Installed: node_modules alone, as this machine's installation holds them.
	installed, err := tsworker.Locate("client")
	if err == nil {
		_, err = tsworker.Locate("sdk")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("the run with the libraries: %v", err)
	}
	dir := filepath.Join(tmp, "ts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(installed, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	out, code = mcpchaos([]string{tsworker.EnvDir + "=" + dir}, "run", "ts.yaml", "--out", "r.json", "--progress", "off")
	exp, _ := os.ReadFile(filepath.Join(elsewhere, "r.json"))
	if code != 0 || !strings.Contains(string(exp), "@modelcontextprotocol/sdk") || !strings.Contains(string(exp), "@modelcontextprotocol/client") {
		t.Fatalf("run with the libraries: exit %d, want 0 and both TypeScript libraries in the export:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, tsworker.Script)); err != nil {
		t.Errorf("the binary ran no script of its own in %s: %v", dir, err)
	}
}
