package shards

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/generator"
)

// GroupStatus is one client group's sessions by state and its errors now: a row of the live
// progress view, and the part of a shard's status line the parent of a --procs run adds up.
type GroupStatus struct {
	Name                string           `json:"name"`
	Live                int              `json:"live"`
	Reconnecting        int              `json:"reconnecting"`
	BelievedLiveButDead int              `json:"believed_live_but_dead"`
	DeadDetected        int64            `json:"dead_detected"`
	Misattributed       int64            `json:"misattributed"`
	Errors              map[string]int64 `json:"errors,omitempty"`
	// Withheld is why false-live must not be read as a count (results.NotApplicable,
	// results.EstimateRefuted), "" when it may.
	Withheld string `json:"withheld,omitempty"`
}

// Add adds another shard's row of the same group.
func (g *GroupStatus) Add(o GroupStatus) {
	g.Live += o.Live
	g.Reconnecting += o.Reconnecting
	g.BelievedLiveButDead += o.BelievedLiveButDead
	g.DeadDetected += o.DeadDetected
	g.Misattributed += o.Misattributed
	if g.Withheld == "" {
		g.Withheld = o.Withheld
	}
	for k, n := range o.Errors {
		if g.Errors == nil {
			g.Errors = map[string]int64{}
		}
		g.Errors[k] += n
	}
}

// Status is one `run --progress json` line, a JSON Lines record written every second:
//
//	{"time":"2026-12-02T17:45:10.5Z","elapsed_s":1.5,"groups":[{"name":"naive","live":25,...}]}
//
// time is when it was written (UTC), elapsed_s the seconds since the run's start (negative
// while waiting for --start-at), phase the phase in force, faults every fault in force at some
// moment since the previous line, groups each group's row. The other lines a run writes to
// stderr (warnings, problems, the summary's notes) never start with '{'; the Supervisor tells
// its shards' status lines from them with ParseStatus and prefixes the others with the shard's
// number. docs/commands.md, "Progress".
type Status struct {
	Time     time.Time     `json:"time"`
	ElapsedS float64       `json:"elapsed_s"`
	Phase    string        `json:"phase,omitempty"`  // the workload phase in force
	Faults   []string      `json:"faults,omitempty"` // the faults in force
	Groups   []GroupStatus `json:"groups"`
	// Generator is the load generator's own figures of its last second (docs/metrics.md,
	// "Generator"); absent before the first second or in a --procs parent.
	Generator *generator.Live `json:"generator,omitempty"`
}

// ParseStatus reads a --progress json line; ok is false for any other line.
func ParseStatus(line string) (st Status, ok bool) {
	if !strings.HasPrefix(line, `{"time":`) {
		return st, false
	}
	return st, json.Unmarshal([]byte(line), &st) == nil
}
