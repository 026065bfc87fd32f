package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/workloads"
)

func newFaultsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "faults",
		Short: "Manage fault proxies on a toxiproxy-server",
		Args:  args(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newFaultsCleanCmd())
	return cmd
}

func newFaultsCleanCmd() *cobra.Command {
	var api, prefix string
	cmd := &cobra.Command{
		Use:   "clean --toxiproxy URL",
		Short: "Remove the proxies that killed runs left on a toxiproxy-server",
		Long: `Remove from a toxiproxy-server every proxy whose name starts with the prefix: by default
every proxy any mcpchaos run created ("` + faults.NamePrefix + `..."), which is what a run killed
before it could clean up leaves behind. A run's own prefix (in its export's notes) removes only
that run's. Proxies of anyone else are never touched.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if api == "" {
				return usagef("--toxiproxy URL is required, e.g. --toxiproxy http://127.0.0.1:8474")
			}
			if msg := workloads.CheckToxiproxyURL(api); msg != "" {
				return usagef("--toxiproxy %s", msg)
			}
			if !strings.HasPrefix(prefix, faults.NamePrefix) {
				return usagef("--prefix %q: mcpchaos removes only its own proxies, whose names start with %q", prefix, faults.NamePrefix)
			}
			removed, err := faults.Clean(api, prefix)
			for _, n := range removed {
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", n)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d proxies removed from %s\n", len(removed), api)
			return nil
		},
	}
	cmd.Flags().StringVar(&api, "toxiproxy", "", "the toxiproxy-server's API URL, e.g. http://127.0.0.1:8474")
	cmd.Flags().StringVar(&prefix, "prefix", faults.NamePrefix, "remove only proxies whose names start with this")
	return cmd
}
