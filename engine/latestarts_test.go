package engine

import (
	"strings"
	"testing"
)

// A phase where most planned turns came before their clients had a session (a loaded runner
// initialized them late) is an incomplete run, said with the counts; one where a few did is
// not, nor one that made every turn.
func TestLateStartMakesTheRunIncomplete(t *testing.T) {
	for _, tc := range []struct {
		pt   phaseTurns
		want string
	}{
		{phaseTurns{Turns: 80}, ""},
		{phaseTurns{Turns: 70, NotStarted: 10}, ""},
		{phaseTurns{Turns: 40, NotStarted: 40}, ""}, // half: far from the stated share
		{phaseTurns{Turns: 16, NotStarted: 64}, ""}, // 80%: the share itself is not passed
		{phaseTurns{Turns: 10, NotStarted: 70}, "only 10 of its 80 planned turns"},
		{phaseTurns{Turns: 2, NotStarted: 78}, "group naive: phase active: only 2 of its 80 planned turns had a client with a session; 78 came before"},
		{phaseTurns{}, ""}, // no turns planned (a phase shorter than a period)
	} {
		got := lateStart("naive", "active", tc.pt)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.pt, got, tc.want)
		}
	}
	if got := lateStart("naive", "active", phaseTurns{Turns: 4, NotStarted: 76}); !strings.Contains(got, "calls_not_made") || !strings.Contains(got, "80%") {
		t.Errorf("the line names neither the counter nor the share: %q", got)
	}
}
