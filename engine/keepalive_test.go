package engine

import (
	"fmt"
	"testing"

	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// keepaliveWorkload is the reference server behind a 1 s idle cutoff (the idle_timeout toxic
// for the whole run, as a load balancer in front of it), sending no notifications: its GET
// streams carry nothing but the keep-alives of ka. A group of mcpchaos's probe clients and one
// of the Go SDK's real client call every 200 ms, so their POST connections never idle out.
func keepaliveWorkload(t *testing.T, ka string) *workloads.Workload {
	t.Helper()
	src := fmt.Sprintf(`name: keepalive
target:
  builtin: {session_ttl: 30s, notify_interval: 0s, keepalive: %s}
phases:
  - {name: active, duration: 4s, calls: true}
x-group: &g {clients: 2, ramp: 200ms, call_every: 200ms, concurrency: 1}
groups:
  - {<<: *g, name: probe, policy: probe}
  - {<<: *g, name: gosdk, policy: gosdk}
faults:
  - {name: lb-idle-cutoff, toxic: idle_timeout, attributes: {timeout: 1000}, at: 0s}
`, ka)
	w, err := workloads.Parse("keepalive.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A server that sends no keep-alive loses its idle GET streams to the cutoff: every client
// of both groups sees its stream dropped. The same server sending a keep-alive every 50 ms
// (twenty within the cutoff, a margin no busy machine eats) keeps every stream, whatever its
// shape: no drop, and the Go SDK's client takes a named event and a message without id: in
// its stride (its calls go on, its stream stays).
func TestKeepaliveShapeBehindIdleCutoff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ka    string
		drops bool
	}{
		{"none", true},
		{"{shape: comment, every: 50ms}", false},
		{"{shape: event, every: 50ms}", false}, // the Go SDK reads the named event and goes on
		{"{shape: no-id, every: 50ms}", false}, // and a message without id:
	} {
		t.Run(tc.ka, func(t *testing.T) {
			t.Parallel()
			exp, err := Run(t.Context(), mustPlan(t, keepaliveWorkload(t, tc.ka)), WithStderr(testWriter{t}))
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"probe", "gosdk"} {
				g := groupNamed(t, exp, name)
				drops := g.Counters["drops"]
				t.Logf("keepalive %s: group %s: %d drops, %d replays, %d calls ok", tc.ka, name, drops, g.Counters["replays_ok"], g.Counters["tool_calls_ok"])
				switch {
				case g.Counters["tool_calls_ok"] == 0:
					t.Errorf("group %s made no call: %v", name, g.Counters)
				case tc.drops && drops < int64(g.Clients):
					t.Errorf("keepalive %s: group %s dropped %d streams, want at least one for each of its %d clients", tc.ka, name, drops, g.Clients)
				case !tc.drops && drops != 0:
					t.Errorf("keepalive %s: group %s dropped %d streams, want none", tc.ka, name, drops)
				}
			}
		})
	}
}

func groupNamed(t *testing.T, exp *results.Export, name string) *results.Group {
	t.Helper()
	for i := range exp.Groups {
		if exp.Groups[i].Name == name {
			return &exp.Groups[i]
		}
	}
	t.Fatalf("no group %s in the export", name)
	return nil
}
