package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/outfile"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/hlog"
	"github.com/mcpchaos/mcpchaos/results/report"
)

func newReportCmd() *cobra.Command {
	var out, title string
	cmd := &cobra.Command{
		Use:   "report RESULT... [-o report.html]",
		Short: "Write one self-contained HTML report of one or more runs, with plots",
		Long: `Write an HTML report of the given exports: for each run its thresholds, counters per group
side by side, latency percentile curves (HdrHistogram style: the tail on a log scale), and the
session-state timeline with the fault windows marked; given several runs, trends across them
(oldest first). The file is self-contained: plots are inline SVG written directly, with no
script, and it loads nothing from the network (no font, no stylesheet), so it can be archived as a CI artifact and
opened offline. -o - writes it to stdout.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := outfile.Check(out); err != nil {
				return usagef("-o %s: %v", out, err)
			}
			var runs []report.Run
			for _, p := range a {
				e, err := results.ReadFile(p)
				if err != nil {
					return err
				}
				runs = append(runs, report.Run{File: p, Export: e, Intervals: hlog.ReadBeside(p, e.Run.ID, cmd.ErrOrStderr())})
			}
			opts := report.Options{Title: title, Version: version}
			if out == "-" {
				return report.Write(cmd.OutOrStdout(), runs, opts)
			}
			if err := outfile.WriteWithContext(cmd.Context(), out, os.Stdout, func(w io.Writer) error { return report.Write(w, runs, opts) }); err != nil {
				return fmt.Errorf("writing the report: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s (%s)\n", out, words.Count(len(runs), "run"))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "mcpchaos-report.html", "where to write the HTML report (- for stdout)")
	cmd.Flags().StringVar(&title, "title", "", "the report's title (default \"mcpchaos report\")")
	return cmd
}
