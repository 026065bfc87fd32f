package main

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/clients/mcpgoworker"
	"github.com/mcpchaos/mcpchaos/clients/tsworker"
)

// newSetupCmd installs what the binary cannot embed: the TypeScript client libraries that the
// ts-sdk and ts-client policies run in node workers (the worker's script is embedded), and
// mcp-go v1.6.0's worker, which cannot live in the binary beside mcp-go v1.2.1 (its source is
// embedded and built with go).
func newSetupCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Install what mcpchaos needs beside its binary (the TypeScript client libraries, mcp-go v1.6.0's worker)",
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
	cmd.AddCommand(ts, newSetupGoCmd())
	return cmd
}

// newSetupGoCmd builds mcp-go v1.6.0's worker (clients/mcpgoworker) from the source embedded
// in the binary.
func newSetupGoCmd() *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "go-libraries",
		Short: "Build the worker of mcp-go " + mcpgoworker.Version + " that the mcpgo-v1.6 policy runs (go build)",
		Long: `Build the worker process that holds mcp-go ` + mcpgoworker.Version + `'s clients for the groups of policy
mcpgo-v1.6 (and the matrix's mcpgo-v1.6 rows). One Go module cannot hold two versions of
mcp-go, and this binary holds v1.2.1 (policy mcpgo); the worker's source and its go.mod and
go.sum are embedded and built with the machine's go into the user's cache directory
(~/.cache/mcpchaos/mcpgoworker-<hash> on Linux), or into $MCPCHAOS_GO_WORKER_DIR, or --dir
(then set MCPCHAOS_GO_WORKER_DIR to it for the runs). Needs go and reaches the Go module
proxy (checked against the embedded go.sum). A run finds the worker there by itself.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				d, err := mcpgoworker.InstallDir()
				if err != nil {
					return err
				}
				dir = d
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "mcpchaos: building mcp-go %s's worker into %s (go build)\n", mcpgoworker.Version, dir)
			if err := mcpgoworker.Install(cmd.Context(), dir, cmd.ErrOrStderr()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "github.com/mark3labs/mcp-go %s\ninstalled in %s\n", mcpgoworker.Version, dir)
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "build here instead (then set MCPCHAOS_GO_WORKER_DIR to it)")
	return c
}
