package results

import (
	"fmt"
	"io"
	"time"
)

// WriteRun prints a finished run's summary: its heading (shard is ", shard I/N" or ""), why
// it did not measure the server when it did not (WriteIncomplete), the summary table, the
// release checks, the problems and findings, the steady state and the generator's warning.
func WriteRun(stdout io.Writer, exp *Export, shard string, problems []string) error {
	status := ""
	switch {
	case exp.Run.Interrupted:
		status = " (interrupted)"
	case exp.Run.Aborted != "":
		status = " (aborted by a threshold)"
	}
	fmt.Fprintf(stdout, "\nmcpchaos: %s%s against %s, %s%s\n\n", exp.Run.Workload, shard, exp.Run.Target,
		exp.Run.End.Sub(exp.Run.Start).Round(time.Millisecond), status)
	WriteIncomplete(stdout, exp)
	if err := WriteSummary(stdout, exp); err != nil {
		return err
	}
	WriteRelease(stdout, exp)
	if len(problems) > 0 || len(exp.Run.Findings) > 0 {
		fmt.Fprintf(stdout, "\n")
	}
	for _, p := range problems {
		fmt.Fprintf(stdout, "problem: %s\n", p)
	}
	for _, f := range exp.Run.Findings {
		fmt.Fprintf(stdout, "finding: %s\n", f)
	}
	WriteSteady(stdout, exp)
	WriteGeneratorWarning(stdout, exp)
	return nil
}

// WriteSteady prints the steady state and the rollbacks, and each failed rollback as a problem.
func WriteSteady(stdout io.Writer, exp *Export) {
	WriteSteadyState(stdout, exp)
	for _, f := range exp.FailedRollbacks() {
		fmt.Fprintf(stdout, "problem: rollback %s: the system under test may be left changed\n", f)
	}
}
