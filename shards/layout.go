package shards

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Layout is where the exports of a sharded run of the workload named name go: merged is the
// merged export (out as given; the default path of the run's start when out is ""), dir the
// directory the shards write theirs into, beside it (beside the default path when the merged
// export goes to standard output, "-"). Nothing is created.
func Layout(out, name string, start time.Time) (merged, dir string) {
	merged = out
	if out == "" {
		merged = results.DefaultPath(name, start)
	}
	shardsOut := merged
	if out == "-" {
		shardsOut = results.DefaultPath(name, start)
	}
	return merged, strings.TrimSuffix(shardsOut, filepath.Ext(shardsOut)) + ".shards"
}

// For is c with what w decides of it: how many reference server processes serve it (ServersFor
// this machine) and their session cap, the workload's max_sessions, else none, as the
// in-process built-in target has.
func (c Config) For(w *workloads.Workload) Config {
	c.Servers = ServersFor(w.Clients(), ThisMachine())
	c.ServeMaxSessions = 0
	if w.Target.Builtin != nil {
		c.ServeMaxSessions = w.Target.Builtin.MaxSessions
	}
	return c
}
