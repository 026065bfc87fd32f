package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Rollbacks: the workload's actions that put the system back (Chaos Toolkit's rollbacks). They
// run once at the end of every run that got past its checks, however it ended: completed,
// failed, aborted by a threshold, interrupted (the first Ctrl-C or SIGTERM; a second one ends
// the process at once). Each is bounded by its own timeout and runs on a context the interrupt
// does not cancel. They run before the proxies are removed and the reference server stops.

// RollbackError is a run that went as planned but whose rollbacks did not all succeed: the
// system under test may be left changed. The export's rollbacks say which and why.
type RollbackError struct{ Failed []string }

func (e *RollbackError) Error() string {
	return "rollback failed, the system under test may be left changed: " + strings.Join(e.Failed, "; ")
}

// rollbackBound bounds remove_faults, whose calls have no timeout of their own.
const rollbackBound = 30 * time.Second

type rollbackPlan struct {
	name   string
	kind   string
	action faults.Action // exec, wait_for
	faults []string      // remove_faults: the faults' names; nil for every toxic
}

// prepareRollbacks builds the rollbacks, expanding exec environments now: a variable that is
// not set stops the run before anything starts (and so before anything needs undoing).
func (r *runner) prepareRollbacks() error {
	if !r.runsSteady() {
		return nil
	}
	for _, rb := range r.w.Rollbacks {
		p := rollbackPlan{name: rb.Name, kind: rb.Action.Kind, faults: rb.Faults}
		if rb.Action.Kind != workloads.ActionRemoveFaults {
			a, err := buildAction(workloads.Fault{Name: rb.Name, Where: rb.Where, Action: rb.Action}, r.secrets, r.groups)
			if err != nil {
				return &ConfigError{Field: "rollbacks", Err: err}
			}
			if rb.Action.Kind == workloads.ActionExec {
				if _, secrets, err := rb.Action.ExpandEnv(os.LookupEnv); err == nil {
					r.secrets.Add(secrets...)
				}
			}
			p.action = a
		}
		r.rollbacks = append(r.rollbacks, p)
	}
	r.rollbacksReady = true
	return nil
}

// rollBack runs the rollbacks and records them in exp (or, when there is no export, on
// stderr); a failure turns a run that went well into a *RollbackError, and is noted otherwise.
func (r *runner) rollBack(ctx context.Context, exp *results.Export, err error) (*results.Export, error) {
	if !r.rollbacksReady || len(r.rollbacks) == 0 {
		return exp, err
	}
	base := r.began
	if base.IsZero() {
		base = time.Now()
	}
	if ctx.Err() != nil {
		fmt.Fprintf(r.opts.stderr, "mcpchaos: running the workload's %d rollbacks before stopping (a second signal ends at once, without them)\n", len(r.rollbacks))
	}
	ctx = context.WithoutCancel(ctx) // an interrupted run is rolled back too
	var log []results.ActionAt
	var failed []string
	for _, p := range r.rollbacks {
		a := r.rollbackOne(ctx, p, base)
		log = append(log, a)
		if a.Error != "" {
			failed = append(failed, p.name+": "+a.Error)
		}
	}
	if exp == nil {
		for _, a := range log {
			fmt.Fprintf(r.opts.stderr, "mcpchaos: rollback %s (%s): %s\n", a.Action, a.Kind, a.Detail)
		}
	} else {
		exp.Rollbacks = log
		for _, f := range failed {
			exp.Run.Notes = append(exp.Run.Notes, "rollback "+f+": the system under test may be left changed")
		}
	}
	if len(failed) > 0 && err == nil {
		return exp, &RollbackError{Failed: failed}
	}
	return exp, err
}

// endGroups ends what the run's commands left running in their process groups (a daemon a
// deploy script spawned, a child holding a rollback's output open) and says so: in the
// export's notes, or on stderr when there is no export.
func (r *runner) endGroups(exp *results.Export) *results.Export {
	for _, line := range r.groups.End() {
		if exp != nil {
			exp.Run.Notes = append(exp.Run.Notes, line)
		} else {
			fmt.Fprintf(r.opts.stderr, "mcpchaos: %s\n", line)
		}
	}
	return exp
}

func (r *runner) rollbackOne(ctx context.Context, p rollbackPlan, base time.Time) results.ActionAt {
	began := time.Now()
	a := results.ActionAt{Action: p.name, Kind: p.kind, StartedAtS: roundS(began.Sub(base))}
	if p.kind == workloads.ActionRemoveFaults {
		detail, err := r.removeFaults(ctx, p.faults)
		a.Detail = detail
		if err != nil {
			a.Error = err.Error()
		}
	} else {
		out := p.action.Do(ctx, faults.Env{Since: func() time.Duration { return time.Since(base) }})
		a.Detail, a.Command, a.ExitStatus, a.Output, a.OutputTruncated = out.Detail, out.Command, out.ExitStatus, out.Output, out.Truncated
		if out.Err != nil {
			a.Error = out.Err.Error()
		}
	}
	a.EndedAtS = roundS(time.Since(base))
	return a
}

// removeFaults takes the named toxic faults (all when names is nil) off every proxy they apply
// to; a toxic already off counts as removed.
func (r *runner) removeFaults(ctx context.Context, names []string) (string, error) {
	if r.inj == nil {
		return "no proxies were made: nothing to remove", nil
	}
	ctx, cancel := context.WithTimeout(ctx, rollbackBound)
	defer cancel()
	removed, off := 0, 0
	var errs []error
	for _, f := range r.w.Faults {
		if f.Action != nil || names != nil && !contains(names, f.Name) {
			continue
		}
		for _, g := range r.w.Groups {
			if !f.AppliesTo(g.Name) {
				continue
			}
			err := r.inj.RemoveToxic(ctx, g.Name, f.Name)
			switch {
			case err == nil:
				removed++
			case strings.Contains(strings.ToLower(err.Error()), "not found"):
				off++
			default:
				errs = append(errs, err)
			}
		}
	}
	detail := fmt.Sprintf("removed %d toxics (%d were already off)", removed, off)
	if len(errs) > 0 {
		return detail + fmt.Sprintf("; %d removals failed", len(errs)), errors.Join(errs...)
	}
	return detail, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
