package inspect

import (
	"slices"
	"testing"
)

// The advice names the tool of a tools/call cursor, the verdict's probe and statuses, and a
// TTL mode only when it is one a run knows.
func TestAdvice(t *testing.T) {
	fp := &Fingerprint{
		CursorVia: "a tools/call slow_query reply, sent with a progress token",
		TTLMode:   "absolute",
		Verdict:   Verdict{Probe: "tools/list", DeadStatuses: []int{400, 404}},
	}
	a := fp.Advice()
	if a.Tool != "slow_query" || a.Probe != "tools/list" || !slices.Equal(a.DeadStatuses, []int{400, 404}) || a.TTLMode != "absolute" {
		t.Errorf("Advice = %+v", a)
	}
	fp = &Fingerprint{CursorVia: "the priming event of a ping", TTLMode: "unknown"}
	if a := fp.Advice(); a.Tool != "" || a.TTLMode != "" {
		t.Errorf("no tool call, no known TTL mode: %+v", a)
	}
}
