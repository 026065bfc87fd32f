package engine

import (
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/results"
)

// faultLog is what the run's faults and actions did, as they happen: the schedule and the
// actions append to it from their goroutines, the observers read which faults are in force,
// and the export's form (results.FaultAt, results.ActionAt) is made once, at the end.
type faultLog struct {
	mu      sync.Mutex
	faults  []faultAt
	actions []faults.Report
}

// faultAt is one fault on one proxy (or one step of an action on its target).
type faultAt struct {
	fault, proxy   string
	added, removed time.Duration // from the run's start; removed 0: still in force when the run ended
	err            error         // it could not be applied
}

// added records a fault (or an action's step) going on.
func (l *faultLog) added(f faultAt) {
	l.mu.Lock()
	l.faults = append(l.faults, f)
	l.mu.Unlock()
}

// removed records the last time fault went on proxy going off again, at.
func (l *faultLog) removed(fault, proxy string, at time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.faults) - 1; i >= 0; i-- {
		if f := &l.faults[i]; f.fault == fault && f.proxy == proxy && f.removed == 0 {
			f.removed = at
			return
		}
	}
}

// action records an action that ended.
func (l *faultLog) action(rep faults.Report) {
	l.mu.Lock()
	l.actions = append(l.actions, rep)
	l.mu.Unlock()
}

// inForce names the faults in force on some proxy now, in the order they were applied.
func (l *faultLog) inForce() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, f := range l.faults {
		if f.err == nil && f.removed == 0 && !seen[f.fault] {
			seen[f.fault] = true
			out = append(out, f.fault)
		}
	}
	return out
}

// exported is the log in the export's form.
func (l *faultLog) exported() ([]results.FaultAt, []results.ActionAt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var fs []results.FaultAt
	for _, f := range l.faults {
		fa := results.FaultAt{Fault: f.fault, Proxy: f.proxy, AddedAtS: f.added.Seconds(), RemovedAtS: f.removed.Seconds()}
		if f.err != nil {
			fa.Error = f.err.Error()
		}
		fs = append(fs, fa)
	}
	var as []results.ActionAt
	for _, rep := range l.actions {
		a := results.ActionAt{
			Action: rep.Name, Kind: rep.Kind,
			StartedAtS: rep.Started.Seconds(), EndedAtS: rep.Done.Seconds(),
			Detail: rep.Detail, Command: rep.Command, ExitStatus: rep.ExitStatus,
			Output: rep.Output, OutputTruncated: rep.Truncated,
		}
		if rep.Err != nil {
			a.Error = rep.Err.Error()
		}
		as = append(as, a)
	}
	return fs, as
}
