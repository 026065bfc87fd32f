package engine

import (
	"strings"
	"testing"
	"time"
)

// When the groups' common clock starts, with the moment set-up ended injected: startLead
// ahead, or the plan's StartAt; a StartAt passed is an error, except for a shard, which joins
// late and says by how much. (A StartAt less than startLead ahead was refused as "passed"
// before this test; it now starts startLead ahead, late by less than startLead.)
func TestStartTime(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	ahead, passed := now.Add(time.Minute), now.Add(-3*time.Second)
	shard := &Shard{Index: 1, Count: 4}
	for _, tc := range []struct {
		name  string
		plan  Plan
		start time.Time
		late  time.Duration
		err   string
	}{
		{name: "as soon as set up", plan: Plan{}, start: now.Add(startLead)},
		{name: "a start time ahead", plan: Plan{startAt: ahead}, start: ahead},
		{name: "a start time within the lead", plan: Plan{startAt: now.Add(startLead / 2)}, start: now.Add(startLead), late: startLead / 2},
		{name: "a shard's start time passed", plan: Plan{startAt: passed, shard: shard}, start: now.Add(startLead), late: 3*time.Second + startLead},
		{name: "a start time passed", plan: Plan{startAt: passed}, err: "the start time 2026-12-03T09:59:57Z passed while this run was setting up"},
	} {
		start, late, err := startTime(now, &tc.plan)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
		case err != nil || !start.Equal(tc.start) || late != tc.late:
			t.Errorf("%s: start %s late %s (%v), want %s late %s", tc.name, start.Format(time.RFC3339Nano), late, err,
				tc.start.Format(time.RFC3339Nano), tc.late)
		}
	}
}
