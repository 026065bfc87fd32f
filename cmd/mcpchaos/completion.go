package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Shell completion (cobra's `mcpchaos completion bash|zsh|fish|powershell`): the built-in
// workload names beside files for WORKLOAD, and the values of the flags that take a word.

// progressModes are --progress's values.
var progressModes = []string{"auto", "bars", "lines", "json", "off"}

// completeWorkload offers the built-in workloads' names, and files (a workload is either).
func completeWorkload(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, n := range workloads.BuiltinNames() {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveDefault // files too
}

// completeFormats offers --formats values: each format, after those already written
// ("csv,h" → "csv,hgrm"), or none.
func completeFormats(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []string
	if done == "" && strings.HasPrefix("none", last) {
		out = append(out, "none")
	}
	for _, f := range results.Formats {
		if strings.HasPrefix(f, last) && !strings.Contains(","+done, ","+f+",") {
			out = append(out, done+f)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// addCompletions registers the completions of the commands that take a workload or a word.
func addCompletions(root *cobra.Command) {
	for _, c := range root.Commands() {
		switch c.Name() {
		case "run", "validate":
			c.ValidArgsFunction = completeWorkload
		case "serve":
			_ = c.RegisterFlagCompletionFunc("from", completeWorkload)
		}
		if c.Flags().Lookup("progress") != nil {
			_ = c.RegisterFlagCompletionFunc("progress", cobra.FixedCompletions(progressModes, cobra.ShellCompDirectiveNoFileComp))
		}
		if c.Flags().Lookup("formats") != nil {
			_ = c.RegisterFlagCompletionFunc("formats", completeFormats)
		}
	}
}
