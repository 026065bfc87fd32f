package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/outfile"
	"github.com/mcpchaos/mcpchaos/results/compare"
)

// compareHelp is the command's help, beside the function that builds it.
const compareHelp = `Compare the export CURRENT with one or more baseline exports BASE (typically the last good
runs; a directory stands for every export in it): for every group (and overall) and every
metric, the baselines' median and spread, the current value, the change, and a verdict; and
every threshold, which must keep passing. Prints the verdict first, what changed in words,
then the judged rows that changed (--all: every row) as a table, or --json, or --markdown for
a pull-request comment. Exit status: 1 if the current run did not complete (an error, an
interruption: there is nothing to judge); 99 if it was aborted by or failed its own
thresholds, if anything regressed, or with --strict if timing rows were inconclusive because
a run's load generator was starved (docs/gate.md).

How each number is judged (docs/gate.md): by what it says about the server. Load figures of
the generator (calls_skipped, turn_lag, dispatch_lag) are never judged; control groups (policy naive) only
on their hazard outcomes, for showing the hazard; overall sums are judged per group; hazards
and work counts against the spread the baselines show and the tolerance; latencies against
the baselines' run-to-run spread of the statistic (3 baselines or more). Timing rows of a
run whose load generator was starved are inconclusive. Baselines that
failed, were interrupted or aborted are left out (--last N keeps the N newest good ones).

Tolerances start from defaults (misattributed errors, stale events applied, re-init
collisions and retries against dead sessions may not grow at all; latency p50/p90/p99 may grow
10% and 1ms; tool_calls_ok may fall 10%; counts that depend on the faults, like drops, are
reported only), then a --tolerances file, then --tolerance flags; for each metric the last rule
that matches wins. A rule is PATTERN=SPEC: PATTERN a metric (probe_latency.p99), a group's
metric (naive.misattributed_errors) or a glob (*_latency.p99, naive.*); SPEC is +0 (may not
grow), +10% (may grow 10%), +10%,+2ms (past both), -5% (may fall 5%), or info (report only).

Runs of different workloads (by name, or by the workload file's hash) are different
experiments: compare refuses them unless --force is given.`

func newCompareCmd() *cobra.Command {
	var (
		asJSON, asMarkdown, all, force, strict bool
		tolFile, junitFile                     string
		last                                   int
		tolFlags                               []string
	)
	cmd := &cobra.Command{
		Use:   "compare BASE... CURRENT",
		Short: "Compare a run with earlier ones: per group and metric, the change and a verdict",
		Long:  compareHelp,
		Args:  args(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if asJSON && asMarkdown {
				return usagef("--json and --markdown exclude each other; pick one")
			}
			if last < 0 {
				return usagef("--last %d: give a number of baseline runs, e.g. --last 5 (0: all)", last)
			}
			tol, err := tolerances(tolFile, tolFlags)
			if err != nil {
				return err
			}
			c, bases, cur, err := compare.Files(a[:len(a)-1], a[len(a)-1], last, force, tol)
			if err != nil {
				return err
			}
			if err := writeComparison(cmd.OutOrStdout(), c, asJSON, asMarkdown, all); err != nil {
				return err
			}
			if junitFile != "" {
				if err := outfile.WriteWith(junitFile, cmd.OutOrStdout(), func(w io.Writer) error { return compare.WriteJUnit(w, c) }); err != nil {
					return fmt.Errorf("--junit %s: %w", junitFile, err)
				}
			}
			return compare.Gate(c, bases, cur, strict)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the comparison as JSON (every row)")
	f.BoolVar(&asMarkdown, "markdown", false, "print the comparison as Markdown, for a pull-request comment")
	f.BoolVar(&all, "all", false, "list every row, not only the judged rows that changed")
	f.BoolVar(&strict, "strict", false, "exit 99 when the verdict is inconclusive (a starved runner, and no server floor timed by the kernel to judge latency by), not only on regressions")
	f.StringVar(&junitFile, "junit", "", "also write the verdict as JUnit XML to this file (a case \"compare verdict\", a failing case per regression; - for stdout)")
	f.BoolVar(&force, "force", false, "compare runs of different workloads (or a shard with a whole run)")
	f.IntVar(&last, "last", 0, "use only the N newest good baseline runs (0: every good one given)")
	f.StringVar(&tolFile, "tolerances", "", "a YAML file of PATTERN: SPEC tolerance rules, applied in order after the defaults")
	f.StringArrayVarP(&tolFlags, "tolerance", "t", nil, "a tolerance rule PATTERN=SPEC, e.g. probe_latency.p99=+20% (repeatable; after --tolerances)")
	return cmd
}

func tolerances(file string, flags []string) (gate.Tolerances, error) {
	tol := gate.DefaultTolerances()
	if file != "" {
		rules, err := gate.ReadTolerances(file)
		if err != nil {
			return nil, usagef("--tolerances %v", err)
		}
		tol = append(tol, rules...)
	}
	for _, f := range flags {
		r, err := gate.ParseToleranceArg(f)
		if err != nil {
			return nil, usagef("--tolerance %q: %v", f, err)
		}
		tol = append(tol, r)
	}
	return tol, nil
}

func writeComparison(out io.Writer, c *compare.Comparison, asJSON, asMarkdown, all bool) error {
	switch {
	case asJSON:
		return compare.WriteJSON(out, c)
	case asMarkdown:
		return compare.WriteMarkdown(out, c, all)
	}
	return compare.Write(out, c, all)
}
