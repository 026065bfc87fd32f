package engine

import (
	"net/url"
	"os"

	"github.com/mcpchaos/mcpchaos/redact"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// runSecrets are the secrets a run knows: the target's headers (expanded from the
// environment), the user-info and query of the target's, the toxiproxy-server's and the event
// log's URLs, and the expanded environment of its exec actions.
func runSecrets(w *workloads.Workload) *redact.Set {
	s := redact.New()
	addURL := func(raw string) {
		if u, err := url.Parse(raw); err == nil {
			s.AddURL(u)
		}
	}
	if w.Target.Builtin == nil {
		addURL(w.Target.URL)
		if h, err := w.Target.ExpandHeaders(os.LookupEnv); err == nil {
			s.AddHeader(h)
		}
	} else {
		addURL(w.Target.Builtin.EventLog)
	}
	addURL(w.Toxiproxy)
	for _, f := range w.Faults {
		if f.Action != nil && f.Action.Kind == workloads.ActionExec {
			if _, secrets, err := f.Action.ExpandEnv(os.LookupEnv); err == nil {
				s.Add(secrets...)
			}
		}
	}
	return s
}

// redactOut is the one place where what a run learnt leaves the engine for an output: the
// export (every string in it: error samples, notes, problems, fault and action errors, the
// target), and the error with the fields callers print, through redact's one exit (Set.Out).
// A server's text has been decoded by now (a JSON-escaped `\/`, a percent-encoded path), so
// what the raw bytes hid is plain here.
func (r *runner) redactOut(exp *results.Export, err error) (*results.Export, error) {
	return exp, r.secrets.Out(err, exp)
}
