package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/workloads"
)

// A built-in's tool is replaced only by one that says nothing destructive: the first that says
// it streams, else the first listed; none when every tool sounds destructive.
func TestSubstituteNeverDestructive(t *testing.T) {
	tool := func(name, desc string) toolInfo { return toolInfo{Name: name, Description: desc} }
	for _, tc := range []struct {
		tools []toolInfo
		want  string
	}{
		{[]toolInfo{tool("delete_order", ""), tool("lookup", "Look up an order"), tool("long_report", "reports progress")}, "long_report"},
		{[]toolInfo{tool("reset_db", ""), tool("purge", ""), tool("get", "read a record")}, "get"},
		{[]toolInfo{tool("stream_writer", "writes a file, streaming progress"), tool("echo", "")}, "echo"},
		{[]toolInfo{tool("notify", "Drop every table and notify")}, ""},
		{[]toolInfo{tool("remove_user", ""), tool("write_file", "")}, ""},
	} {
		pf := &preflight{tools: tc.tools}
		got := ""
		if k := pf.substitute(); k >= 0 {
			got = tc.tools[k].Name
		}
		if got != tc.want {
			t.Errorf("substitute among %v = %q, want %q", tc.tools, got, tc.want)
		}
	}
}

func TestForgeID(t *testing.T) {
	for id, want := range map[string]string{
		"mcp-session-0b4c": "mcp-session-0b40", "abc0": "abc1", "zzz": "", "": "",
	} {
		if got := forgeID(id); got != want {
			t.Errorf("forgeID(%q) = %q, want %q", id, got, want)
		}
	}
}

// A group that made fewer than half of a calls phase's calls for want of a live session is a
// problem naming the phase and, when the preflight saw one, the dead status it does not know.
func TestShortfalls(t *testing.T) {
	groups := []workloads.GroupSpec{{Name: "naive", DeadStatuses: []int{404, 410}}, {Name: "probe", DeadStatuses: []int{404, 410}}}
	phases := []workloads.Phase{{Name: "active", Calls: true}, {Name: "quiet"}, {Name: "after", Calls: true, Duration: 3 * time.Second}}
	by := [][]phaseTurns{
		{{Turns: 100, NotMade: 50}, {}, {Turns: 100, NotMade: 10}},        // half: not a shortfall
		{{Turns: 100, NotMade: 10}, {Turns: 0}, {Turns: 90, NotMade: 90}}, // reconnecting through "after"
	}
	got := shortfalls(groups, phases, nil, by, &preflight{unknownStatus: 400}, nil)
	if len(got) != 1 {
		t.Fatalf("shortfalls = %q, want one line", got)
	}
	for _, want := range []string{"group probe: phase after:", "stayed reconnecting", "answered 400 to dead sessions", "dead_statuses [400]", "--dead-statuses 404,410,400"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("%q does not say %q", got[0], want)
		}
	}
	got = shortfalls(groups, phases, nil, by, &preflight{unknownStatus: 404}, []string{"", "HTTP 503 busy"})
	if len(got) != 1 || !strings.Contains(got[0], "the first error: HTTP 503 busy") || strings.Contains(got[0], "dead_statuses [") {
		t.Errorf("shortfalls = %q", got)
	}
	// In a phase the workload's own faults disturbed, a group that came back for some of its
	// turns is not a problem (how soon depends on the machine); one that never did is.
	by[1][2] = phaseTurns{Turns: 90, NotMade: 80}
	if got := shortfalls(groups, phases, []bool{false, false, true}, by, nil, nil); len(got) != 0 {
		t.Errorf("shortfalls in a disturbed phase = %q", got)
	}
	if got := shortfalls(groups, phases, []bool{false, false, true}, by, &preflight{unknownStatus: 400}, nil); len(got) != 1 {
		t.Errorf("a shortfall with a known cause in a disturbed phase: %q", got)
	}
	by[1][2] = phaseTurns{Turns: 90, NotMade: 90}
	if got := shortfalls(groups, phases, []bool{false, false, true}, by, nil, nil); len(got) != 1 {
		t.Errorf("a group reconnecting through a disturbed phase: %q", got)
	}
	// Turns skipped behind calls that kept failing count only when the cause is known.
	by[1][2] = phaseTurns{Turns: 90, NotMade: 10, Skipped: 60}
	if got := shortfalls(groups, phases, nil, by, nil, nil); len(got) != 0 {
		t.Errorf("skipped turns without a known cause: %q", got)
	}
	if got := shortfalls(groups, phases, nil, by, &preflight{unknownStatus: 400}, nil); len(got) != 1 || !strings.Contains(got[0], "70 of its 90 turns made no call") {
		t.Errorf("skipped turns with a known cause: %q", got)
	}
	by[1][2] = phaseTurns{Turns: 90, NotMade: 90}
	phases[2].Duration = time.Second // too short to tell the server from the machine
	if got := shortfalls(groups, phases, []bool{false, false, true}, by, nil, nil); len(got) != 0 {
		t.Errorf("a group reconnecting through a short disturbed phase: %q", got)
	}
}
