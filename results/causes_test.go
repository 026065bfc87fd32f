package results_test

import (
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/generator"
	"github.com/mcpchaos/mcpchaos/results"
)

// Whose errors (docs/metrics.md): the tool's own limits, and the timeouts recorded while the
// generator was starved outside the workload's faults, are the tool's; resets, refused
// connections, and timeouts while a fault was in force or not starved are the server's.
func TestAttributeSplitsErrorsByCause(t *testing.T) {
	sample := func(ts float64, timeouts, resets int64) results.Sample {
		return results.Sample{TS: ts, Groups: map[string]results.GroupSample{"g": {Errors: map[string]int64{"timeout": timeouts, "reset": resets}}}}
	}
	e := &results.Export{
		Groups: []results.Group{{Name: "g", Counters: map[string]int64{"errors_own_limits": 2, "sessions_started": 10, "tool_calls_ok": 50},
			Errors: map[string]int64{"timeout": 60, "reset": 5, "connect": 2, "status": 7}}},
		Timeline: &results.Timeline{IntervalS: 1, Samples: []results.Sample{
			sample(1, 0, 0), sample(2, 10, 0), // not starved: 10 timeouts, the server's
			sample(3, 30, 5), // starved (2..4): 20 timeouts the tool's, 5 resets the server's
			sample(4, 40, 5), // starved, but a fault came at 3.9: its errors are the fault's
			sample(5, 50, 5), // starved, the fault removed at 3.95 less than 2 s before: the fault's
			sample(6, 60, 5), // not starved
		}},
		Generator: &generator.Report{Seconds: 6, Starving: []generator.Window{{FromS: 2, ToS: 5, Why: "timer lag"}}},
		Faults:    []results.FaultAt{{Fault: "cut", AddedAtS: 3.9, RemovedAtS: 3.95}},
	}
	e.Overall = e.Groups[0]
	e.Attribute()
	c := e.Groups[0].Causes
	// Starved and fault-free: only (2,3]; the 2 own-limit errors are the tool's whatever the time.
	want := results.Causes{OwnLimits: 2, OwnWhileStarved: 20, OwnErrors: 22, ServerErrors: 67 - 22}
	if c == nil || *c != want {
		t.Fatalf("causes %+v, want %+v", c, want)
	}
	if o := e.Overall.Causes; o == nil || *o != want {
		t.Errorf("overall causes %+v, want the group's", o)
	}
	if why := e.OwnErrorsWhy(); why != "" {
		t.Errorf("22 of 67 errors are not most of them: %q", why)
	}
	e.Groups[0].Errors["reset"], e.Groups[0].Errors["timeout"] = 0, 30 // now 32 transport errors, 22 the tool's
	e.Attribute()
	if why := e.OwnErrorsWhy(); !strings.Contains(why, "22 of its 32 transport errors are the tool's own") {
		t.Errorf("incomplete: %q", why)
	}
}
