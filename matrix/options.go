package matrix

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcpchaos/mcpchaos/workloads"
)

// Options are what `mcpchaos matrix` changes in its scenario, or in a workload given in its
// place; the errors of Apply name the command's flags, and are usage errors to it.
type Options struct {
	// Strict is the reference server's strict regime (GET validates the session; --regime
	// strict); else it keeps the scenario's, the seed's (GET does not validate the session,
	// the event log outlives it).
	Strict bool
	// URL is a server of the caller's to run against instead of the reference server, keeping
	// the scenario's declared session TTL unless SessionTTL says otherwise.
	URL string
	// Tool and Arguments replace every group's tool call when not empty.
	Tool      string
	Arguments map[string]any
	// SessionTTL is the target's session TTL as --session-ttl gives it ("" for the
	// workload's): the built-in scenario's outage is timed to outlast it.
	SessionTTL string
}

// Apply applies o to w; builtin says w is the built-in scenario (Scenario), whose outage is
// then timed to the target's TTL (Outage), which must be within a minute.
func Apply(w *workloads.Workload, builtin bool, o Options) error {
	if o.Strict {
		if w.Target.Builtin == nil || o.URL != "" {
			return errors.New("--regime strict sets the reference server's regime; a server given by URL has its own")
		}
		w.Target.Builtin.GetValidation = workloads.GetStrict
	}
	if o.URL != "" && w.Target.Builtin != nil {
		// The workload is validated before the URL replaces its target: a tool of the
		// user's server (--tool) is checked against that server, not the reference one's.
		w.Target = workloads.Target{URL: o.URL, SessionTTL: w.Target.SessionTTL, Where: "--target"}
	}
	for i := range w.Groups {
		if o.Tool != "" {
			w.Groups[i].Tool = o.Tool
		}
		if o.Arguments != nil {
			w.Groups[i].Arguments = o.Arguments
		}
	}
	if !builtin {
		return nil
	}
	// The outage outlasts the target's TTL, whatever TTL --session-ttl declares.
	ttl := w.Target.SessionTTL
	switch v := o.SessionTTL; v {
	case "":
	case "none":
		return errors.New("--session-ttl none: the matrix lets sessions die by their TTL within one run; give a target whose sessions expire within a minute")
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("--session-ttl %q: want a duration greater than 0, e.g. 2s", v)
		}
		ttl = d
	}
	if ttl > time.Minute {
		return fmt.Errorf("--session-ttl %s: the matrix waits the TTL out within one run; give a target whose sessions expire within a minute", ttl)
	}
	Outage(w, ttl)
	return nil
}
