package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/merge"
)

func newMergeCmd() *cobra.Command {
	var (
		out          string
		formats      string
		allowPartial bool
		quiet        bool
	)
	cmd := &cobra.Command{
		Use:   "merge SHARD... -o MERGED.json",
		Short: "Merge the exports of a sharded run into the export of the whole run, exactly",
		Long: `Merge the JSON exports of the shards of one run (mcpchaos run --shard i/n) into one export:
counters and errors summed, histograms merged from their HdrHistogram encodings (percentiles
of the merge are those of one histogram holding every sample, never averages), timelines
aligned on wall-clock time, fault logs kept per shard. The thresholds the shards recorded are
judged again on the merged numbers and printed; exit status 99 if any fails.

A SHARD argument may be a directory: every *.json in it that is a shard is taken. Merge
refuses shards of different workloads (or workload files), duplicate shard numbers, and,
unless --allow-partial, missing ones.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if out == "" {
				return usagef("merge needs -o FILE: where to write the merged export")
			}
			fs, err := parseFormats(formats)
			if err != nil {
				return err
			}
			if err := checkOutputs("-o", out, fs); err != nil {
				return err
			}
			parts, err := merge.ReadShards(a, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			merged, err := merge.Merge(parts, merge.Options{AllowPartial: allowPartial})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if out == "-" {
				w = cmd.ErrOrStderr() // the export is on stdout: the summary goes beside it
			}
			if !quiet { // the summary first: a full disk found when writing must not lose it
				fmt.Fprintf(w, "mcpchaos: %s, %d shards merged\n\n", merged.Run.Workload, len(parts))
				results.WriteIncomplete(w, merged) // the merged generator's verdict and whose the errors are, first
				if err := results.WriteSummary(w, merged); err != nil {
					return err
				}
			}
			if err := results.WriteThresholdTable(w, merged.Thresholds, ""); err != nil {
				return err
			}
			written, err := results.WriteExportSet(cmd.Context(), out, merged, fs)
			if err != nil {
				return fmt.Errorf("writing the merged export: %w", err)
			}
			printExport(w, out, written)
			if err := results.IncompleteErr(merged, false); err != nil {
				return err // its errors are mostly the tool's own: the shards did not measure the server
			}
			return results.VerdictErr(merged)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "where to write the merged JSON export (required; - for stdout)")
	f.StringVar(&formats, "formats", strings.Join(results.Formats, ","), "companions written beside the merged export: csv, hgrm, junit, or none")
	f.BoolVar(&allowPartial, "allow-partial", false, "merge even when some shards of 0..n-1 are missing")
	f.BoolVarP(&quiet, "quiet", "q", false, "print no summary table")
	return cmd
}
