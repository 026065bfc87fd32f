package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/results"
)

func matrixCmd(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"matrix"}, args...))
	err := root.ExecuteContext(context.Background())
	if err != nil {
		fmt.Fprintln(&out, err) // as main prints it
	}
	return out.String(), exitCode(err)
}

func TestMatrixUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--regime", "lax"}, `--regime "lax": want seed or strict`},
		{[]string{"--regime", "strict", "--target", "http://127.0.0.1:9/mcp", "--session-ttl", "2s"}, "a server given by URL has its own"},
		{[]string{"--arguments", "[1]"}, "want a JSON object"},
		{[]string{"--out", "-"}, "write it to a file"},
		{[]string{"--target", "http://127.0.0.1:9/mcp", "--session-ttl", "30m"}, "expire within a minute"},
	} {
		out, code := matrixCmd(t, tc.args...)
		if code != exitUsage || !strings.Contains(out, tc.want) {
			t.Errorf("matrix %v: exit %d, want %d and %q:\n%s", tc.args, code, exitUsage, tc.want, out)
		}
	}
}

// A matrix of the two Go libraries (no node needed) under a short scenario of the user's:
// the table names each library and what it did.
func TestMatrixPrintsLibraryOutcomes(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	dir := t.TempDir()
	wl := filepath.Join(dir, "m.yaml")
	os.WriteFile(wl, []byte(`name: m
target:
  builtin: {session_ttl: 1s, retention: 30s, get_validation: permissive, notify_interval: 200ms, retry: 0s}
phases:
  - {name: active, duration: 1.5s, calls: true}
  - {name: outage, duration: 3s, calls: false}
  - {name: after, duration: 3s, calls: true}
groups:
  - {name: gosdk, policy: gosdk, clients: 2, call_every: 200ms, tool: slow, request_timeout: 3s}
  - {name: mcpgo, policy: mcpgo, clients: 2, call_every: 200ms, tool: slow, request_timeout: 3s}
faults:
  - {name: outage, toxic: down, at: 1.2s, for: 2.8s}
`), 0o600)
	out, code := matrixCmd(t, wl, "--progress", "off", "--out", filepath.Join(dir, "m.json"), "--markdown")
	t.Log(out)
	if code != exitOK && code != exitRuntime {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"| gosdk | github.com/modelcontextprotocol/go-sdk@v1.8.0 (2025-11-25) |",
		"| mcpgo | github.com/mark3labs/mcp-go@v1.2.1 (2025-11-25) |",
		"ErrSessionTerminated", // mcp-go names every 404 so; the Go SDK only when its POST meets it first
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the matrix lacks %q", want)
		}
	}
	e, err := results.ReadFile(filepath.Join(dir, "m.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Run.Libraries) != 2 {
		t.Errorf("libraries in the export: %v", e.Run.Libraries)
	}
}

// The matrix of docs/libraries.md against the SDK servers of internal/peers (a minute and a
// third each), in the matrix's own scenario (matrix.yaml): calls of slow_query lasting 5 s,
// so every client's first call is mid-call when the proxy goes down at 4 s; an outage of
// 12 s (--session-ttl 8.5s + 3.5 s). The servers' TTL is 7 s: mcp-go's sweeper ends an idle
// session up to half a TTL late, and every death must fall within the outage, after the
// TypeScript SDKs' default reconnects. Run it with
//
//	MCPCHAOS_MATRIX_DOCS=1 go test ./cmd/mcpchaos -run TestLibraryMatrixAgainstPeers -v -timeout 20m
func TestLibraryMatrixAgainstPeers(t *testing.T) {
	if os.Getenv("MCPCHAOS_MATRIX_DOCS") == "" {
		t.Skip("set MCPCHAOS_MATRIX_DOCS=1 to measure the matrix of docs/libraries.md")
	}
	o := peers.Options{SessionTTL: 7 * time.Second, Notify: 250 * time.Millisecond}
	for _, srv := range []*peers.Server{peers.GoSDK(t, o), peers.MCPGo(t, o), peers.MCPGoRetained(t, o), peers.MCPGoIDs(t, o), peers.TS(t, o)} {
		out, code := matrixCmd(t, "--target", srv.URL, "--session-ttl", "8.5s", "--progress", "off", "--markdown",
			"--tool", "slow_query", "--arguments", `{"query":"q","delay_ms":5000}`, "--out", filepath.Join(t.TempDir(), "m.json"))
		fmt.Printf("\n### %s (exit %d)\n%s\n", srv.Name, code, out)
	}
}
