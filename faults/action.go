package faults

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// Besides toxics on proxies, a schedule may hold actions: faults that act on
// the system itself rather than on the network between it and the clients.
// A restart, a rebalance and a scale act on the reference server's Topology;
// exec runs a command (a deploy script, kubectl) against a real target, and
// wait_for waits until it is ready again. Each kind is one small file.

// Topology is the reference server as replicas behind a router: what
// restart, rebalance and scale act on. refserver.Cluster implements it.
type Topology interface {
	Slots() []int // the replicas that exist now
	// RestartAs puts a fresh process in the slot, speaking era ("": as before): its in-memory
	// sessions are lost.
	RestartAs(slot int, fault string, grace time.Duration, era string) error
	Rebalance(fault string)                 // the router loses its session affinities
	Scale(replicas int, fault string) error // replicas removed (their sessions lost) or added
}

// Action is one non-network fault. Do carries it out once and returns when it
// is done or ctx ends; Kind names it in the export.
type Action interface {
	Kind() string
	Do(ctx context.Context, env Env) Outcome
}

// Env is what actions may act on.
type Env struct {
	Topology Topology // nil against a URL target
	// Since is the time since the schedule's start, for the steps of an action.
	Since func() time.Duration
}

// Outcome is what an action did, for the export and the run's problems.
type Outcome struct {
	Detail     string   // in words: "restarted replicas 0, 1, 2 (1s apart)"
	Steps      []Step   // the moments it touched one part of the topology
	Command    []string // exec: the command and its arguments as run
	ExitStatus *int     // exec: the exit status; nil if it never ran or was killed
	Output     string   // exec: stdout and stderr, bounded and redacted
	Truncated  bool     // the output was longer than what was kept
	Err        error    // the action failed: the run names it as a problem
}

// Step is one part of an action, e.g. one replica restarting in a rolling
// deploy, at an offset from the schedule's start.
type Step struct {
	At     time.Duration
	Target string // "replica-0", "router", "exec"
}

// ScheduledAction is an action with its name and the offset it starts at.
type ScheduledAction struct {
	Name   string
	At     time.Duration
	Action Action
}

// Report is one action as it happened.
type Report struct {
	Name          string
	Kind          string
	Started, Done time.Duration // offsets from the schedule's start
	Outcome
}

// RunActions carries out the actions one after another in the order of their
// offsets (an action still running delays the next, as a deploy delays the
// readiness check after it), reporting each to onDone from the caller's
// goroutine. It returns the first failure, or nil; it stops when ctx ends,
// which is the normal end of a run.
func RunActions(ctx context.Context, env Env, start time.Time, actions []ScheduledAction, onDone func(Report)) error {
	actions = slices.Clone(actions)
	slices.SortStableFunc(actions, func(a, b ScheduledAction) int { return cmp.Compare(a.At, b.At) })
	if env.Since == nil {
		env.Since = func() time.Duration { return time.Since(start) }
	}
	var first error
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for _, a := range actions {
		if wait := time.Until(start.Add(a.At)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return first
			case <-timer.C:
			}
		}
		if ctx.Err() != nil {
			return first
		}
		rep := Report{Name: a.Name, Kind: a.Action.Kind(), Started: env.Since()}
		rep.Outcome = a.Action.Do(ctx, env)
		rep.Done = env.Since()
		if rep.Err != nil && ctx.Err() == nil && first == nil {
			first = fmt.Errorf("%s %s: %w", rep.Kind, a.Name, rep.Err)
		}
		if onDone != nil {
			onDone(rep)
		}
	}
	return first
}

// needTopology is the error of a topology action against a URL target; the
// workload is checked before, so this is the backstop.
func needTopology(kind string) Outcome {
	return Outcome{Err: fmt.Errorf("%s needs the built-in reference server; against a URL target, drive your deploy with exec", kind)}
}
