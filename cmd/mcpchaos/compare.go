package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/results"
)

func newCompareCmd() *cobra.Command {
	var (
		asJSON, asMarkdown, all, force bool
		tolFile                        string
		tolFlags                       []string
	)
	cmd := &cobra.Command{
		Use:   "compare BASE CURRENT",
		Short: "Compare a run with an earlier one: per group and metric, the change and a verdict",
		Long: `Compare the export CURRENT with the export BASE (typically the last good run): for every
group (and overall) and every metric, both values, the change, and a verdict against the
metric's tolerance; and every threshold, which must keep passing. Prints the rows that changed
(--all: every row) as a table, or --json, or --markdown for a pull-request comment. Exit status
99 if anything regressed.

Tolerances start from sensible defaults (misattributed errors, stale events applied, re-init
collisions and retries against dead sessions may not grow at all; latency p50/p90/p99 may grow
10% and 1ms; tool_calls_ok may fall 10%; counts that depend on the faults, like drops, are
reported only), then a --tolerances file, then --tolerance flags; for each metric the last rule
that matches wins. A rule is PATTERN=SPEC: PATTERN a metric (probe_latency.p99), a group's
metric (naive.misattributed_errors) or a glob (*_latency.p99, naive.*); SPEC is +0 (may not
grow), +10% (may grow 10%), +10%,+2ms (past both), -5% (may fall 5%), or info (report only).

Runs of different workloads (by name, or by the workload file's hash) are different
experiments: compare refuses them unless --force is given.`,
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if asJSON && asMarkdown {
				return usagef("--json and --markdown exclude each other; pick one")
			}
			tol := results.DefaultTolerances()
			if tolFile != "" {
				rules, err := readTolerances(tolFile)
				if err != nil {
					return err
				}
				tol = append(tol, rules...)
			}
			for _, f := range tolFlags {
				r, err := parseToleranceFlag(f)
				if err != nil {
					return err
				}
				tol = append(tol, r)
			}
			base, err := readExport(a[0])
			if err != nil {
				return err
			}
			cur, err := readExport(a[1])
			if err != nil {
				return err
			}
			bp, cp := results.Part{File: a[0], Export: base}, results.Part{File: a[1], Export: cur}
			forced := ""
			if err := results.Comparable(bp, cp); err != nil {
				if !force {
					return fmt.Errorf("%w; pass --force to compare them anyway", err)
				}
				forced = err.Error()
			}
			c := results.Compare(bp, cp, tol)
			c.Forced = forced
			out := cmd.OutOrStdout()
			switch {
			case asJSON:
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(c); err != nil {
					return err
				}
			case asMarkdown:
				if err := results.WriteComparisonMarkdown(out, c, all); err != nil {
					return err
				}
			default:
				if err := results.WriteComparison(out, c, all); err != nil {
					return err
				}
			}
			if c.Regressions > 0 {
				return &gateError{fmt.Sprintf("%d regression%s against %s", c.Regressions, map[bool]string{true: "", false: "s"}[c.Regressions == 1], a[0])}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the comparison as JSON (every row)")
	f.BoolVar(&asMarkdown, "markdown", false, "print the comparison as Markdown, for a pull-request comment")
	f.BoolVar(&all, "all", false, "list every row, not only those that changed")
	f.BoolVar(&force, "force", false, "compare runs of different workloads (or a shard with a whole run)")
	f.StringVar(&tolFile, "tolerances", "", "a YAML file of PATTERN: SPEC tolerance rules, applied in order after the defaults")
	f.StringArrayVarP(&tolFlags, "tolerance", "t", nil, "a tolerance rule PATTERN=SPEC, e.g. probe_latency.p99=+20% (repeatable; after --tolerances)")
	return cmd
}

// readExport reads a result file; a file that is not a usable export is a usage error.
func readExport(path string) (*results.Export, error) {
	e, err := results.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return e, nil
}

func parseToleranceFlag(s string) (results.ToleranceRule, error) {
	pattern, spec, ok := cutLast(s, "=")
	if !ok {
		return results.ToleranceRule{}, usagef("--tolerance %q: want PATTERN=SPEC, e.g. probe_latency.p99=+20%% or misattributed_errors=+0", s)
	}
	r, err := results.ParseToleranceRule(pattern, spec)
	if err != nil {
		return r, usagef("--tolerance %q: %v", s, err)
	}
	return r, nil
}

func cutLast(s, sep string) (string, string, bool) {
	for i := len(s) - len(sep); i >= 0; i-- {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

// readTolerances reads a tolerance file: a YAML mapping of PATTERN: SPEC, applied in order.
//
//	probe_latency.p99: +20%
//	naive.*: info
//	misattributed_errors: +0
func readTolerances(path string) ([]results.ToleranceRule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--tolerances %s: %v", path, errors.Unwrap(err))
	}
	var ms yaml.MapSlice
	if err := yaml.Unmarshal(data, &ms); err != nil {
		return nil, usagef("--tolerances %s: not a YAML mapping of PATTERN: SPEC (%v)", path, err)
	}
	var rules []results.ToleranceRule
	for _, it := range ms {
		pattern := fmt.Sprint(it.Key)
		spec := fmt.Sprint(it.Value)
		if it.Value == nil {
			spec = ""
		}
		r, err := results.ParseToleranceRule(pattern, spec)
		if err != nil {
			return nil, usagef("--tolerances %s: %s: %v", path, pattern, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}
