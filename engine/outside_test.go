package engine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// outsideProgram is a Go program of another module, as a team writes one against mcpchaos: it
// asks Run for no plan and for an empty one, changes its workload after NewPlan checked it
// (issue 31: Clients = -3 set then made Run panic inside the fleet), runs the plan, and reads
// a group by a misspelt name.
const outsideProgram = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/workloads"
)

const src = ` + "`" + `name: outside
target:
  builtin: {session_ttl: 2s, notify_interval: 100ms}
phases:
  - {name: active, duration: 1s, calls: true}
groups:
  - {name: probe, clients: 2, policy: probe, call_every: 100ms}
` + "`" + `

func main() {
	ctx := context.Background()
	if exp, err := engine.Run(ctx, nil); exp != nil || err == nil {
		fmt.Println("Run(nil) ran")
		os.Exit(1)
	} else {
		fmt.Println("Run(nil):", err)
	}
	if exp, err := engine.Run(ctx, &engine.Plan{}); exp != nil || err == nil {
		fmt.Println("Run(&Plan{}) ran")
		os.Exit(1)
	} else {
		fmt.Println("Run(&Plan{}):", err)
	}

	w, err := workloads.Parse("outside.yaml", []byte(src))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	plan, err := engine.NewPlan(w)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	w.Groups[0].Clients = -3
	w.Groups = append(w.Groups, w.Groups...)
	plan.Workload().Groups[0].Clients = 1000

	exp, err := engine.Run(ctx, plan)
	if err != nil {
		fmt.Println("run:", err)
		os.Exit(1)
	}
	probe, err := exp.LookupGroup("probe")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("groups:", len(exp.Groups), "probe clients:", probe.Clients)
	fmt.Println("sessions started:", probe.Counter(metrics.SessionsStarted) >= 2)
	_, err = exp.LookupGroup("prob")
	fmt.Println("misspelt:", err)
	fmt.Println("misspelt reads:", exp.Group("prob").Counter(metrics.SessionsStarted))
}
`

// From outside the module: the program above, in a module of its own that requires mcpchaos
// (replaced by this tree), vetted, built and run. What it prints is what a caller sees.
func TestPlanFromOutsideTheModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program against the whole engine: not under -short")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/chaostest\n\ngo 1.26.0\n\nrequire github.com/mcpchaos/mcpchaos v0.0.0\n\n" +
		"replace github.com/mcpchaos/mcpchaos => " + repo + "\n"
	for name, data := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum, "main.go": []byte(outsideProgram)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	goCmd := func(args ...string) {
		t.Helper()
		// go test puts its own GOROOT/bin first on PATH: this is the go command running the test.
		// Every module the program needs is this tree's, already in the module cache: no network.
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	goCmd("build", "-o", "outside", ".")
	goCmd("vet", ".")
	run := exec.CommandContext(ctx, filepath.Join(dir, "outside"))
	run.Dir = dir
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the program: %v\n%s", err, out)
	}
	t.Logf("the program said:\n%s", out)
	for _, want := range []string{
		"Run(nil): engine.Run: no plan; make one with engine.NewPlan",
		"Run(&Plan{}): engine.Run: an empty Plan; a plan comes from engine.NewPlan",
		"groups: 1 probe clients: 2\n",
		"sessions started: true\n",
		`misspelt: the export has no group "prob"; did you mean "probe"? use one of probe, overall`,
		"misspelt reads: 0\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the program did not say %q", want)
		}
	}
}
