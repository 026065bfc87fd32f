package engine

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/redact"
	"github.com/mcpchaos/mcpchaos/refserver"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Release day: the reference server as replicas behind a router, and the faults that are not
// on the network (restart, rebalance, scale, exec, wait_for). This file turns the workload's
// parts of that into refserver and faults values, runs the actions beside the toxics (one
// goroutine of the run), and puts what happened into the export.

// release is one run's actions and what they did.
type release struct {
	actions []faults.ScheduledAction
	err     error // the first action that failed, once the run is over
}

// topologyOf is the cluster shape a workload's built-in target asks for.
func topologyOf(b *workloads.BuiltinTarget) refserver.Topology {
	return refserver.Topology{Replicas: b.Replicas, Routing: b.Routing, EventLog: b.EventLog}
}

// startBuiltin starts the reference server: a lone server, or a cluster when the workload has
// replicas, a shared log or topology faults.
func (r *runner) startBuiltin(cfg refserver.Config) (*refserver.Instance, error) {
	if !r.w.Topological() {
		return refserver.Start("127.0.0.1:0", cfg)
	}
	return refserver.StartCluster("127.0.0.1:0", cfg, topologyOf(r.w.Target.Builtin))
}

// prepareActions builds the schedule's actions, expanding exec environments now so that a
// missing variable stops the run before it starts.
func (r *runner) prepareActions() error {
	if r.w.Target.Builtin == nil {
		if _, err := r.w.Target.ExpandHeaders(os.LookupEnv); err != nil {
			return &ConfigError{Err: err}
		}
	}
	for _, f := range r.w.Faults {
		if f.Action == nil {
			continue
		}
		a, err := buildAction(f, r.secrets, r.groups)
		if err != nil {
			return &ConfigError{Err: err}
		}
		r.rel.actions = append(r.rel.actions, faults.ScheduledAction{Name: f.Name, At: f.At, Action: a})
	}
	for _, f := range r.w.Faults {
		if f.Action == nil || f.Action.Kind == workloads.ActionExec || f.Action.Kind == workloads.ActionWaitFor {
			continue
		}
		if r.inst == nil || r.inst.Cluster == nil { // --target, or --procs (whose shards get --target)
			return &ConfigError{Err: fmt.Errorf("%s: %s acts on the reference server run by this process; it cannot run against a URL target (--target, --procs): use exec there", f.Where, f.Action.Kind)}
		}
	}
	return nil
}

func buildAction(f workloads.Fault, runSecrets *redact.Set, groups *faults.Groups) (faults.Action, error) {
	a := f.Action
	switch a.Kind {
	case workloads.ActionRestart:
		return faults.Restart{Name: f.Name, Replica: a.Replica, Delay: a.Delay, Grace: a.Grace, Era: a.Era}, nil
	case workloads.ActionRebalance:
		return faults.Rebalance{Name: f.Name}, nil
	case workloads.ActionScale:
		return faults.Scale{Name: f.Name, Replicas: a.Replicas}, nil
	case workloads.ActionWaitFor:
		return waitFor(a.WaitFor, groups), nil
	case workloads.ActionExec:
		env, secrets, err := a.ExpandEnv(os.LookupEnv)
		if err != nil {
			return nil, err
		}
		set := redact.New(append(secrets, runSecrets.Secrets()...)...)
		e := faults.Exec{
			Command: a.Command, Args: a.Args, Env: env, Timeout: a.Timeout, MaxOutput: a.MaxOutput,
			Redact: set.Bytes, Groups: groups,
		}
		if a.WaitFor != nil {
			e.WaitFor = waitFor(a.WaitFor, groups)
		}
		return e, nil
	}
	return nil, fmt.Errorf("%s: unknown action %q", f.Where, a.Kind)
}

func waitFor(w *workloads.WaitFor, groups *faults.Groups) *faults.WaitFor {
	return &faults.WaitFor{URL: w.URL, Command: w.Command, Timeout: w.Timeout, Interval: w.Interval, Groups: groups}
}

// runActions carries out the actions from start until ctx ends; the first failure is returned.
func (r *runner) runActions(ctx context.Context, start time.Time) error {
	if len(r.rel.actions) == 0 {
		return nil
	}
	env := faults.Env{}
	if r.inst != nil && r.inst.Cluster != nil {
		env.Topology = clusterTopology{r.inst.Cluster}
	}
	return faults.RunActions(ctx, env, start, r.rel.actions, r.noteAction)
}

// clusterTopology adapts a refserver.Cluster to faults.Topology.
type clusterTopology struct{ c *refserver.Cluster }

func (t clusterTopology) Slots() []int { return t.c.Slots() }
func (t clusterTopology) RestartAs(slot int, fault string, grace time.Duration, era string) error {
	return t.c.RestartAs(slot, fault, grace, era)
}
func (t clusterTopology) Rebalance(fault string)          { t.c.Rebalance(fault) }
func (t clusterTopology) Scale(n int, fault string) error { return t.c.Scale(n, fault) }

// noteAction records an action in the export's actions and its steps in the fault timeline.
func (r *runner) noteAction(rep faults.Report) {
	r.log.action(rep)
	steps := rep.Steps
	if len(steps) == 0 {
		steps = []faults.Step{{At: rep.Started, Target: rep.Kind}}
	}
	for _, s := range steps {
		r.log.added(faultAt{fault: rep.Name, proxy: s.Target, added: s.At, removed: rep.Done, err: rep.Err})
	}
}

// exportRelease adds the cluster's deaths to the export.
func (r *runner) exportRelease(exp *results.Export) {
	if r.inst == nil || r.inst.Cluster == nil {
		return
	}
	c := r.inst.Cluster
	t := &results.Topology{
		Replicas: c.Topology().Replicas, Routing: c.Topology().Routing,
		EventLog: r.w.Target.Builtin.RedactedEventLog(), LogErrors: c.LogErrors(),
	}
	for _, d := range c.Deaths() {
		t.Deaths = append(t.Deaths, results.DeathsBy{Cause: d.Cause, Fault: d.Fault, Replica: d.Replica, Sessions: d.Sessions})
	}
	exp.Topology = t
	if t.LogErrors > 0 {
		exp.Run.Notes = append(exp.Run.Notes, fmt.Sprintf("the Redis event log failed %d commands: replays after them may lack events (or find none) that a working log would have held", t.LogErrors))
	}
}
