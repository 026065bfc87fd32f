package results

import (
	"fmt"
	"io"
)

// ActionAt is one non-network fault of the schedule as it happened: a
// restart (one replica, or a rolling deploy), a rebalance, a scale, an exec
// (a deploy script) or a wait_for (v2, optional).
type ActionAt struct {
	Action     string   `json:"action"` // its name in the workload
	Kind       string   `json:"kind"`   // restart, rebalance, scale, exec, wait_for
	StartedAtS float64  `json:"started_at_s"`
	EndedAtS   float64  `json:"ended_at_s"`
	Detail     string   `json:"detail,omitempty"`
	Command    []string `json:"command,omitempty"`
	// ExitStatus is the command's exit status; absent if it never ran or was killed.
	ExitStatus *int `json:"exit_status,omitempty"`
	// Output is the command's stdout and stderr, bounded, with secrets redacted.
	Output          string `json:"output,omitempty"`
	OutputTruncated bool   `json:"output_truncated,omitempty"`
	Error           string `json:"error,omitempty"`
	// Shard is the shard that carried it out, in a merged export.
	Shard *int `json:"shard,omitempty"`
}

// Topology is the reference server's shape in a run with replicas, and how
// its sessions died: the exact truth, by cause, fault and replica (v2,
// optional).
type Topology struct {
	Replicas int        `json:"replicas"`
	Routing  string     `json:"routing"`
	EventLog string     `json:"event_log"` // per-replica, shared, or the Redis URL (password redacted)
	Deaths   []DeathsBy `json:"deaths,omitempty"`
	// LogErrors counts Redis event-log commands that failed.
	LogErrors int64 `json:"log_errors,omitempty"`
}

// DeathsBy counts the sessions that died of one cause on one replica.
type DeathsBy struct {
	Cause    string `json:"cause"` // ttl, delete, restart, scale, rebalance
	Fault    string `json:"fault,omitempty"`
	Replica  int    `json:"replica"`
	Sessions int    `json:"sessions"`
}

// WriteRelease writes, under the summary, how the reference server's sessions died and what
// the actions did.
func WriteRelease(w io.Writer, exp *Export) {
	if t := exp.Topology; t != nil {
		fmt.Fprintf(w, "\nreference server: %d replicas, routing %s, event log %s\n", t.Replicas, t.Routing, t.EventLog)
		for _, d := range t.Deaths {
			by := d.Cause
			if d.Fault != "" {
				by += " (" + d.Fault + ")"
			}
			fmt.Fprintf(w, "  sessions died of %-28s on replica %d: %d\n", by, d.Replica, d.Sessions)
		}
		if t.LogErrors > 0 {
			fmt.Fprintf(w, "  event log: %d Redis commands failed\n", t.LogErrors)
		}
	}
	if len(exp.Actions) > 0 {
		fmt.Fprintf(w, "\nactions:\n")
	}
	for _, a := range exp.Actions {
		line := fmt.Sprintf("  %6.2fs-%.2fs  %s %s: %s", a.StartedAtS, a.EndedAtS, a.Kind, a.Action, a.Detail)
		if a.Output != "" {
			line += fmt.Sprintf(" (%d bytes of output in the export)", len(a.Output))
		}
		fmt.Fprintln(w, line)
	}
}
