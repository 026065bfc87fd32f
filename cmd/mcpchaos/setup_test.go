package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/workloads"
)

// The target flags and what cmd makes of a workload's target mistakes: usage errors (exit 2)
// that say where. What a run against a URL target does is engine's (engine/target_test.go).

// Bad target settings are usage errors that say where, and never print a secret.
func TestURLTargetErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.yaml")
	os.WriteFile(path, []byte(`name: t
target:
  url: http://127.0.0.1:1/mcp
  headers:
    Authorization: Bearer ${MCPCHAOS_UNSET_TOKEN}
phases:
  - {name: a, duration: 1s, calls: true}
groups:
  - {name: g, clients: 1, policy: probe}
`), 0o600)
	os.Unsetenv("MCPCHAOS_UNSET_TOKEN")
	wl, err := workloads.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	err = runWorkload(context.Background(), wl, runFlags{out: filepath.Join(dir, "never.json"), progress: "off", quiet: true, formats: "none"}, io.Discard, io.Discard)
	if exitCode(err) != exitUsage || !strings.Contains(fmt.Sprint(err), "w.yaml:5:20: target.headers.Authorization: environment variable MCPCHAOS_UNSET_TOKEN is not set") {
		t.Errorf("err = %v (exit %d)", err, exitCode(err))
	}
	w, _ := workloads.Builtin("seed-incident-fast")
	for _, tc := range []struct {
		name string
		tf   targetFlags
		want string
	}{
		{"--header without a URL target", flags(map[string]string{"header": "X: y"}), "apply to a target given by URL"},
		{"--target without a scheme", flags(map[string]string{"target": "localhost:8080/mcp"}), "--target: \"localhost:8080/mcp\": the scheme must be http or https"},
		{"--toxiproxy with a path", flags(map[string]string{"toxiproxy": "http://127.0.0.1:8474/x"}), "--toxiproxy"},
		{"--header that is not one", flags(map[string]string{"target": "http://127.0.0.1:1/mcp", "header": "secretvalue"}), `"secr…": write it as "Name: value"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := applyTarget(tc.tf, w)
			if exitCode(err) != exitUsage || !strings.Contains(fmt.Sprint(err), tc.want) {
				t.Errorf("err = %v (exit %d), want a usage error about %q", err, exitCode(err), tc.want)
			}
		})
	}
	// --target on a built-in workload keeps its declared TTL unless told otherwise.
	tf := flags(map[string]string{"target": "http://127.0.0.1:1/mcp"})
	w2, err := applyTarget(tf, w)
	if err != nil || w2.Target.URL != "http://127.0.0.1:1/mcp" || w2.Target.SessionTTL != 3*time.Second || w2.Duration != w.Duration {
		t.Errorf("--target on seed-incident-fast: %v %+v", err, w2)
	}
}

// flags builds targetFlags as if the named flags were given on the command line.
func flags(set map[string]string) targetFlags {
	tf := targetFlags{url: set["target"], toxiproxy: set["toxiproxy"], caFile: set["ca-file"]}
	if h, ok := set["header"]; ok {
		tf.headers = []string{h}
	}
	tf.set = func(n string) bool { _, ok := set[n]; return ok }
	return tf
}
