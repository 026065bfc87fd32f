package main

import (
	"github.com/spf13/cobra"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcpchaos",
		Short: "Chaos and load testing for MCP streamable-HTTP servers",
		Long: `mcpchaos holds many simulated MCP client sessions while it injects faults (Toxiproxy)
and lets server session TTLs run out, then measures what clients make of it: liveness-probe
latency, errors blamed on tools that were really session deaths, and retries against dead
sessions.

Start with the built-in demo:  mcpchaos run seed-incident-fast`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.AddCommand(newRunCmd(), newValidateCmd(), newServeCmd(), newVersionCmd(), newBenchCmd())
	root.AddCommand(newCompareCmd(), newMergeCmd(), newReportCmd())
	root.AddCommand(newInspectCmd(), newFaultsCmd())
	return root
}

// args wraps a cobra positional-argument check so that its error is a usage error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return &usageError{err}
		}
		return nil
	}
}
