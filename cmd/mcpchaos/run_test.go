package main

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// runWorkload is `mcpchaos run` on a parsed workload: the flags become the plan, and run writes
// the export and prints.
func runWorkload(ctx context.Context, w *workloads.Workload, fl runFlags, stdout, stderr io.Writer) error {
	plan, err := fl.plan(w)
	if err != nil {
		return err
	}
	return run(ctx, plan, fl, stdout, stderr)
}

// applyTarget is w with the target flags applied, as the run's plan has it.
func applyTarget(tf targetFlags, w *workloads.Workload) (*workloads.Workload, error) {
	opts, err := tf.options(w)
	if err != nil {
		return nil, err
	}
	plan, err := engine.NewPlan(w, opts...)
	if err != nil {
		return nil, flagError(err)
	}
	return plan.Workload(), nil
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("boom"), 1},
		{usagef("bad flag"), 2},
		{&workloads.ValidationError{}, 2},
		{&engine.ConfigError{Err: errors.New("no such variable")}, 2},
		{&engine.SetupError{Err: errors.New("refused")}, 1},
		{&engine.MeasureError{Problems: []string{"gone"}}, 1},
		{errInterrupted, 130},
		{engine.ErrInterrupted, 130},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// group is e.Group that fails the test when the export has no such group.
func group(t *testing.T, e *results.Export, name string) *results.Group {
	t.Helper()
	g := e.Group(name)
	if g == nil {
		t.Fatalf("no group %q in the export", name)
	}
	return g
}
