package engine

import (
	"errors"
	"fmt"
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
