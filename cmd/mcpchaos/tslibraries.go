package main

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/clients/tsworker"
)

// newSetupCmd installs what the binary cannot embed: the TypeScript client libraries that the
// ts-sdk and ts-client policies run in node workers (the worker's script is embedded).
func newSetupCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Install what mcpchaos needs beside its binary (the TypeScript client libraries)",
		Args:  args(cobra.NoArgs),
	}
	var dir string
	ts := &cobra.Command{
		Use:   "ts-libraries",
		Short: "Install the TypeScript MCP client libraries the ts-sdk and ts-client policies run (npm ci)",
		Long: `Install @modelcontextprotocol/sdk and @modelcontextprotocol/client, at the versions this
binary's lock names, for the groups of policy ts-sdk and ts-client (and the matrix's TypeScript
rows): npm ci against the lock embedded in the binary, into the user's cache directory
(~/.cache/mcpchaos/tsworker-<version> on Linux), or into $MCPCHAOS_TS_WORKER_DIR, or --dir
(then set MCPCHAOS_TS_WORKER_DIR to it for the runs). Needs node (20 or later) and npm, and
reaches the npm registry. A run finds the libraries there by itself; the worker's script is
the binary's own.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				d, err := tsworker.InstallDir()
				if err != nil {
					return err
				}
				dir = d
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "mcpchaos: installing the TypeScript libraries into %s (npm ci)\n", dir)
			if err := tsworker.Install(cmd.Context(), dir, cmd.ErrOrStderr()); err != nil {
				return err
			}
			got := tsworker.Installed(dir)
			names := make([]string, 0, len(got))
			for n := range got {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", n, got[n])
			}
			fmt.Fprintf(cmd.OutOrStdout(), "installed in %s\n", dir)
			return nil
		},
	}
	ts.Flags().StringVar(&dir, "dir", "", "install here instead (then set MCPCHAOS_TS_WORKER_DIR to it)")
	cmd.AddCommand(ts)
	return cmd
}
