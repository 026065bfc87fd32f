package engine_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// The seed incident, in-process, as a team would put it in its own go test: the reference
// server with a 3 s session TTL, a load balancer's idle timeout and a proxy restart, and two
// groups of clients (5 each here instead of the workload's 25: the cascade is each session's
// own, and a small fleet keeps to the timeline on a busy CI machine). The naive group blames
// tools for session deaths and retries into dead sessions; the group that probes before it
// resumes does neither.
func Example() {
	w, err := workloads.Builtin("seed-incident-fast")
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range w.Groups {
		w.Groups[i].Clients = 5
	}
	// NewPlan holds a workload changed in Go to the rules of a file (Workload.Validate): a
	// value no file could hold (Clients = -3, two groups of one name, an unknown probe) is a
	// *engine.ConfigError naming the field, and nothing starts. The export names this run's
	// workload "builtin:seed-incident-fast (changed in Go)", with a hash of its own, so that
	// compare never takes it for a run of the file's 25 clients a group.
	plan, err := engine.NewPlan(w)
	if err != nil {
		fmt.Println(err)
		return
	}
	exp, err := engine.Run(context.Background(), plan)
	if err != nil {
		fmt.Println("run:", err)
		return
	}
	naive, err := exp.LookupGroup("naive") // a misspelt name is an error naming the groups
	if err != nil {
		fmt.Println(err)
		return
	}
	probe, err := exp.LookupGroup("probe")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("naive misattributes errors:", naive.Counter(metrics.MisattributedErrors) > 0)
	fmt.Println("naive retries into dead sessions:", naive.Counter(metrics.RetriesAgainstDead) > 0)
	fmt.Println("probe misattributes errors:", probe.Counter(metrics.MisattributedErrors) > 0)
	// Output:
	// naive misattributes errors: true
	// naive retries into dead sessions: true
	// probe misattributes errors: false
}

// A plan is what NewPlan checked, and nothing else: the workload it was made from, and the
// copy the plan hands out, may change afterwards without effect. Run refuses no plan, and the
// zero Plan, with a *engine.ConfigError rather than a panic.
func ExampleNewPlan() {
	w, err := workloads.Builtin("seed-incident-fast")
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, err := engine.NewPlan(w)
	if err != nil {
		fmt.Println(err)
		return
	}
	w.Groups[0].Clients = -3                 // too late: the plan has its own copy
	plan.Workload().Groups[0].Clients = 1000 // a copy too
	fmt.Println("clients planned:", plan.Workload().Groups[0].Clients)

	_, err = engine.Run(context.Background(), &engine.Plan{})
	var ce *engine.ConfigError
	fmt.Println(errors.As(err, &ce), err)
	// Output:
	// clients planned: 25
	// true engine.Run: an empty Plan; a plan comes from engine.NewPlan(workload, options...), which checks it
}
