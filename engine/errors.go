package engine

import (
	"errors"
	"fmt"

	"github.com/mcpchaos/mcpchaos/results"
)

// ErrInterrupted ends a run whose context was cancelled (a signal): the export it returns is
// partial and marked interrupted.
var ErrInterrupted = errors.New("interrupted")

// ConfigError is a mistake in what the run was asked to do (an invalid value of the workload
// or the plan, a header variable that is not set, an unreadable CA file, a fault the
// toxiproxy-server refuses): nothing ran and there is no export. Field names the value at
// fault as a workload file does (groups[0].clients, target.url, thresholds (added)[0],
// shard, toxiproxy, labels), or is empty when the mistake is not one field's.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configErr(format string, args ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, args...)}
}

// SetupError is a run that could not start (the target unreachable, its certificate refused,
// not answering as an MCP server, keeping no sessions for a workload that needs them,
// Toxiproxy not starting). The export says why in run.error.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// MeasureError is a run that went on but could not measure what it was asked to (the target
// gone until the end, the toxiproxy-server lost, no session ever established, no tool call
// that succeeded, a calls phase a group mostly missed for want of a live session).
type MeasureError struct{ Problems []string }

func (e *MeasureError) Error() string {
	return "the run could not measure what it was asked to: " + joinProblems(e.Problems)
}

// PanicError is a panic recovered in a goroutine of the run; the run was stopped.
type PanicError struct{ Msg string }

func (e *PanicError) Error() string { return e.Msg }

// AbortError is a run stopped by a threshold with abort_on_fail that failed for good.
type AbortError struct{ Reason string }

func (e *AbortError) Error() string { return e.Reason }

// Outcome is the error that decides how a finished run ended, from Run's error and its
// export: nil for a run that passed its gate; a *results.GateError (the command's exit 99) for
// a threshold that failed or aborted the run, a system that was not steady, a failed
// steady-state probe or session-leak check; the cause of a run that could not start; else
// Run's error, or the export's own verdict that it did not measure the server.
func Outcome(err error, plan *Plan, exp *results.Export) error {
	var (
		se  *SetupError
		pe  *PanicError
		ae  *AbortError
		nse *NotSteadyError
		rbe *RollbackError
	)
	switch {
	case errors.As(err, &se):
		return se.Err
	case errors.As(err, &pe):
		return fmt.Errorf("%s; the export was written", pe.Msg)
	case errors.As(err, &ae):
		return &results.GateError{Msg: ae.Reason}
	case errors.As(err, &nse):
		return &results.GateError{Msg: nse.Error()}
	case errors.As(err, &rbe):
		if g := runGate(plan, exp); g != nil {
			return g // a failed gate (99) outranks a failed rollback (1)
		}
		return err
	case err != nil:
		return err
	}
	if plan.Shard() == nil { // a shard's is judged on the merge, as its thresholds are
		if err := results.IncompleteErr(exp, false); err != nil {
			return err // the run did not measure the server: its gate says nothing of it
		}
	}
	return runGate(plan, exp)
}

// runGate is the gate of a finished run: its thresholds (left to the merge in a shard) and its
// steady-state probes (shard 0 runs them, and judges them).
func runGate(plan *Plan, exp *results.Export) error {
	return results.GateErr(exp, plan.Shard() == nil)
}

// SetupCause is the error of a run that could not start, to keep beside a failure to write
// its export; nil otherwise.
func SetupCause(err error) error {
	var se *SetupError
	if errors.As(err, &se) {
		return se.Err
	}
	return nil
}
