package main

import (
	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/gate"
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
		Version:       versionLine(), // --version
		// With Args set, cobra hands an unknown command to RunE instead of failing with an
		// error of its own: it becomes a usage error (exit 2) with a suggestion.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 {
				return cmd.Help()
			}
			var names []string
			for _, c := range cmd.Commands() {
				names = append(names, c.Name())
			}
			return usagef("unknown command %q; %srun mcpchaos --help for the commands", a[0], gate.DidYouMean(a[0], names))
		},
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.AddCommand(newRunCmd(), newMatrixCmd(), newValidateCmd(), newServeCmd(), newVersionCmd(), newBenchCmd())
	root.AddCommand(newCompareCmd(), newMergeCmd(), newReportCmd(), newServeFilesCmd())
	root.AddCommand(newInspectCmd(), newFaultsCmd(), newSetupCmd())
	root.InitDefaultCompletionCmd()
	addCompletions(root)
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
