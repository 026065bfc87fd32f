package workloads

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// What reading and checking a workload file may link: the YAML parser, the words the file
// uses (vocab), the threshold language (gate, with the metric names it checks against: package
// metrics, whose recorders hold HdrHistograms, a data structure with no dependencies), and
// the one way a URL is shown (redact). Anything else, above all a package that runs something
// (clients/..., faults, steady, refserver, engine, the Prometheus client, a process), is a
// room of the machinery above this floor.
var (
	allowedModules = []string{
		"github.com/goccy/go-yaml",
		"github.com/HdrHistogram/hdrhistogram-go",
	}
	allowedOwn = []string{
		"github.com/mcpchaos/mcpchaos/workloads",
		"github.com/mcpchaos/mcpchaos/workloads/vocab",
		"github.com/mcpchaos/mcpchaos/gate",
		"github.com/mcpchaos/mcpchaos/metrics",
		"github.com/mcpchaos/mcpchaos/redact",
	}
	// Standard packages that start processes, load code or speak HTTP: nothing here may (a
	// header is checked and expanded as a map; the engine makes it an http.Header).
	forbiddenStd = []string{"os/exec", "plugin", "net/http", "crypto/tls"}
)

// depsVerdict says why pkg may not be linked by workloads, or "" when it may.
func depsVerdict(pkg string) string {
	const own = "github.com/mcpchaos/mcpchaos"
	switch {
	case pkg == own || strings.HasPrefix(pkg, own+"/"):
		for _, a := range allowedOwn {
			if pkg == a {
				return ""
			}
		}
		return "a package of mcpchaos outside the workload's vocabulary"
	case strings.Contains(strings.Split(pkg, "/")[0], "."):
		for _, m := range allowedModules {
			if pkg == m || strings.HasPrefix(pkg, m+"/") {
				return ""
			}
		}
		return "a third-party package reading YAML does not need"
	}
	for _, f := range forbiddenStd {
		if pkg == f {
			return "a standard package that runs something"
		}
	}
	return ""
}

// TestWorkloadsImportNothingThatRuns lists what this package links, as `go list -deps` does,
// and names every package it may not (issue 31: reading a workload once pulled in 126
// third-party packages, through clients/fleet, clients/wire, faults and steady).
func TestWorkloadsImportNothingThatRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// go test puts its own GOROOT/bin first on PATH: this is the go command running the test.
	out, err := exec.CommandContext(ctx, "go", "list", "-deps", ".").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list -deps ./workloads: %v\n%s", err, stderr)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || deps[len(deps)-1] != "github.com/mcpchaos/mcpchaos/workloads" {
		t.Fatalf("go list -deps ./workloads listed %d packages ending with %q, not this package's deps", len(deps), deps[len(deps)-1:])
	}
	var bad []string
	for _, d := range deps {
		if why := depsVerdict(d); why != "" {
			bad = append(bad, d+" ("+why+")")
		}
	}
	if len(bad) > 0 {
		t.Errorf("workloads links %d packages it may not; move the names it needs into workloads/vocab (or pass them in):\n\t%s",
			len(bad), strings.Join(bad, "\n\t"))
	}
}

// The verdict itself, on the packages workloads imported before vocab existed and on what it
// may import, so that the test above cannot pass by allowing everything.
func TestDepsVerdict(t *testing.T) {
	for _, pkg := range []string{
		"github.com/mcpchaos/mcpchaos/clients/fleet", "github.com/mcpchaos/mcpchaos/clients/wire",
		"github.com/mcpchaos/mcpchaos/clients/policy", "github.com/mcpchaos/mcpchaos/faults",
		"github.com/mcpchaos/mcpchaos/steady", "github.com/mcpchaos/mcpchaos/refserver",
		"github.com/mcpchaos/mcpchaos/metrics/prom", "github.com/Shopify/toxiproxy/v2",
		"github.com/prometheus/client_golang/prometheus", "github.com/modelcontextprotocol/go-sdk/mcp",
		"os/exec", "net/http",
	} {
		if depsVerdict(pkg) == "" {
			t.Errorf("%s is allowed; it runs something", pkg)
		}
	}
	for _, pkg := range []string{
		"github.com/goccy/go-yaml/parser", "github.com/mcpchaos/mcpchaos/workloads/vocab",
		"github.com/mcpchaos/mcpchaos/gate", "encoding/json", "net/url", "crypto/x509",
	} {
		if why := depsVerdict(pkg); why != "" {
			t.Errorf("%s is refused (%s); reading a workload needs it", pkg, why)
		}
	}
}
