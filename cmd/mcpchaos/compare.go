package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/outfile"
	"github.com/mcpchaos/mcpchaos/results"
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
			curFile := a[len(a)-1]
			cur, err := results.ReadFile(curFile)
			if err != nil {
				return err
			}
			cp := results.Part{File: curFile, Export: cur}
			bases, skipped, err := compare.ReadBaselines(a[:len(a)-1], curFile, last)
			if err != nil {
				return err
			}
			if len(bases) == 0 {
				return usagef("no good baseline run among %s (a failed, interrupted or aborted run is no baseline)", strings.Join(a[:len(a)-1], ", "))
			}
			forced := ""
			for _, bp := range bases {
				if err := compare.Comparable(bp, cp); err != nil {
					if !force {
						return fmt.Errorf("%w; pass --force to compare them anyway", err)
					}
					forced = err.Error()
				}
			}
			c := compare.Baseline(bases, cp, tol)
			c.Forced, c.Skipped = forced, skipped
			if err := writeComparison(cmd.OutOrStdout(), c, asJSON, asMarkdown, all); err != nil {
				return err
			}
			if junitFile != "" {
				if err := outfile.WriteWith(junitFile, cmd.OutOrStdout(), func(w io.Writer) error { return compare.WriteJUnit(w, c) }); err != nil {
					return fmt.Errorf("--junit %s: %w", junitFile, err)
				}
			}
			return compareError(c, bases, cur, strict)
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

// compareError is what decides compare's exit status (docs/gate.md, "Exit status"): a current
// run that did not complete exits 1 (there is nothing to judge); one aborted by or failing its
// own thresholds, a regression, and with --strict an inconclusive row exit 99.
func compareError(c *compare.Comparison, bases []results.Part, cur *results.Export, strict bool) error {
	against := bases[0].File
	if len(bases) > 1 {
		against = fmt.Sprintf("a baseline of %d runs", len(bases))
	}
	switch {
	case !results.Completed(cur):
		return errors.New(c.CurrentRun)
	case c.CurrentRun != "":
		return &results.GateError{Msg: c.CurrentRun}
	case c.Regressions > 0:
		return &results.GateError{Msg: words.Count(c.Regressions, "regression") + " against " + against}
	case strict && c.Outcome == compare.OutcomeInconclusive:
		return &results.GateError{Msg: fmt.Sprintf("--strict: %d timing rows inconclusive against %s: %s", c.Inconclusive, against, strings.Join(c.Starved, "; "))}
	}
	return nil
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
		r, err := parseToleranceFlag(f)
		if err != nil {
			return nil, err
		}
		tol = append(tol, r)
	}
	return tol, nil
}

func writeComparison(out io.Writer, c *compare.Comparison, asJSON, asMarkdown, all bool) error {
	switch {
	case asJSON:
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(c)
	case asMarkdown:
		return compare.WriteMarkdown(out, c, all)
	}
	return compare.Write(out, c, all)
}

// parseToleranceFlag reads --tolerance PATTERN=SPEC (the pattern may hold '=': SPEC follows the last).
func parseToleranceFlag(s string) (gate.ToleranceRule, error) {
	i := strings.LastIndex(s, "=")
	if i < 0 {
		return gate.ToleranceRule{}, usagef("--tolerance %q: want PATTERN=SPEC, e.g. probe_latency.p99=+20%% or misattributed_errors=+0", s)
	}
	r, err := gate.ParseToleranceRule(s[:i], s[i+1:])
	if err != nil {
		return r, usagef("--tolerance %q: %v", s, err)
	}
	return r, nil
}
