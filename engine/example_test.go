package engine_test

import (
	"context"
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
	naive, probe := exp.Group("naive"), exp.Group("probe")
	fmt.Println("naive misattributes errors:", naive.Counter(metrics.MisattributedErrors) > 0)
	fmt.Println("naive retries into dead sessions:", naive.Counter(metrics.RetriesAgainstDead) > 0)
	fmt.Println("probe misattributes errors:", probe.Counter(metrics.MisattributedErrors) > 0)
	// Output:
	// naive misattributes errors: true
	// naive retries into dead sessions: true
	// probe misattributes errors: false
}
