package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/workloads"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate WORKLOAD",
		Short: "Check a workload file (or built-in name) without running it",
		Long: `Check a workload without running it. WORKLOAD is a file path or the name of a built-in
workload (` + joinNames() + `). Every mistake is reported with file:line:col; exit status 2 if
there is any.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			w, err := workloads.Resolve(a[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%s: ok: workload %q, %d groups, %d clients, %d faults, %s planned\n",
				w.Source, w.Name, len(w.Groups), w.Clients(), len(w.Faults), w.Duration)
			return nil
		},
	}
}

func joinNames() string {
	s := ""
	for i, n := range workloads.BuiltinNames() {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}
