package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/workloads"
)

func newValidateCmd() *cobra.Command {
	var procs int
	var shard string
	cmd := &cobra.Command{
		Use:   "validate WORKLOAD",
		Short: "Check a workload file (or built-in name) without running it",
		Long: `Check a workload without running it. WORKLOAD is a file path or the name of a built-in
workload (` + strings.Join(workloads.BuiltinNames(), ", ") + `). Every mistake is reported with file:line:col; exit status 2 if
there is any. The workload is planned as run plans it (--procs and --shard as run takes them),
so that what validate passes, run does not refuse (but for this machine's file-descriptor limit,
which run checks where it runs).`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			w, err := workloads.Resolve(a[0])
			if err != nil {
				return err
			}
			var opts []engine.PlanOption
			if procs < 1 || procs > 64 {
				return usagef("--procs %d: want 1 to 64 processes", procs)
			}
			if procs > 1 {
				opts = append(opts, engine.WithProcs(procs))
			}
			if shard != "" {
				s, err := parseShard(shard)
				if err != nil {
					return err
				}
				opts = append(opts, engine.WithShard(s.Index, s.Count))
			}
			if _, err := engine.NewPlan(w, opts...); err != nil {
				var se *engine.ShardError
				if errors.As(err, &se) { // as run says it
					return usagef("--shard %q: %s", shard, se.Why)
				}
				return err
			}
			out := cmd.OutOrStdout()
			extra := ""
			if w.SteadyState != nil {
				extra += fmt.Sprintf(", %d steady-state probes", len(w.SteadyState.Probes))
			}
			if len(w.Rollbacks) > 0 {
				extra += fmt.Sprintf(", %d rollbacks", len(w.Rollbacks))
			}
			fmt.Fprintf(out, "%s: ok: workload %q, %d groups, %d clients, %d faults%s, %s planned\n",
				w.Source, w.Name, len(w.Groups), w.Clients(), len(w.Faults), extra, w.Duration)
			return nil
		},
	}
	cmd.Flags().IntVar(&procs, "procs", 1, "check it as run --procs N would run it: N shard processes on this machine")
	cmd.Flags().StringVar(&shard, "shard", "", "check it as run --shard INDEX/COUNT would run it")
	return cmd
}
