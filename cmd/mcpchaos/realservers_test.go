package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/results"
)

// cli runs mcpchaos with args as a user would (the root command, its exit-code mapping) and
// returns what it printed on stdout, its exit status and the export (nil when none was written).
func cli(t *testing.T, args ...string) (string, int, *results.Export) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr bytes.Buffer
	root := newRoot()
	root.SetArgs(append(args, "--out", out, "--progress", "off", "--formats", "none"))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		stdout.WriteString("\nmcpchaos: " + err.Error() + "\n")
	}
	var exp *results.Export
	if _, serr := os.Stat(out); serr == nil {
		if exp, serr = results.ReadFile(out); serr != nil {
			t.Fatalf("reading the export: %v", serr)
		}
	}
	return stdout.String(), exitCode(err), exp
}

func TestExploreReal(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	for _, start := range []func(testing.TB) *peers.Server{
		func(t testing.TB) *peers.Server { return peers.MCPGoStateless(t, peers.Options{}) },
		func(t testing.TB) *peers.Server { return peers.MCPGoIDs(t, peers.Options{SessionTTL: 2e9}) },
		func(t testing.TB) *peers.Server { return peers.TS400(t, peers.Options{SessionTTL: 2e9}) },
		func(t testing.TB) *peers.Server { return peers.Everything(t) },
		func(t testing.TB) *peers.Server { return peers.GoSDKStateless(t, peers.Options{}) },
	} {
		srv := start(t)
		if os.Getenv("EXPLORE") != "all" && os.Getenv("EXPLORE") != srv.Name {
			continue
		}
		out, code, _ := cli(t, "run", "seed-incident-fast", "--target", srv.URL, "--session-ttl", "2s")
		t.Logf("=== %s: exit %d\n%s", srv.Name, code, out)
	}
}
