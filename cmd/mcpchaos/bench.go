package main

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/bench"
	"github.com/mcpchaos/mcpchaos/outfile"
	"github.com/mcpchaos/mcpchaos/shards"
)

func newBenchCmd() *cobra.Command {
	var (
		o        bench.Options
		kinds    string
		child    string
		jsonOut  string
		hold     time.Duration
		profiles string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure what a held session costs: this tool's client against the official Go SDK client",
		Long: `Measure the cost of a held session. The command starts the reference server in a process
of its own, then, for each client kind, a measuring process that holds --sessions sessions
(initialize, GET stream open) through embedded Toxiproxy (in processes of their own, one per
8,000 sessions: a proxied session costs about 2 descriptors there), drives
--rounds rounds of one tools/call per session, and times --probes probes beside bare HTTP round
trips. This process reads the measuring process's memory (RSS, PSS), descriptors and CPU time
from /proc while it stands still, so nothing the benchmark does to measure is counted. It
prints per-session figures for both kinds side by side, with their ratios, the proxy's and the
reference server's own per-session cost. --hold keeps the sessions held that long, with the
measuring process's PID on stderr, for a reading of /proc from outside.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if child != "" { // one of the benchmark's own child processes
				return bench.Child(cmd.Context(), child, cmd.InOrStdin(), cmd.OutOrStdout())
			}
			if o.Sessions < 1 || o.Rounds < 0 || o.Probes < 0 {
				return usagef("--sessions must be at least 1; --rounds and --probes at least 0")
			}
			if hold < 0 || hold > 10*time.Minute {
				return usagef("--hold must be between 0 and 10m, not %s", hold)
			}
			return benchParent(cmd.Context(), o, strings.Split(kinds, ","), hold, profiles, jsonOut, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Sessions, "sessions", 1000, "sessions to hold per client kind")
	f.IntVar(&o.Rounds, "rounds", 3, "rounds of one tools/call per session")
	f.IntVar(&o.Probes, "probes", 500, "probes and bare round trips to time")
	f.IntVar(&o.Workers, "workers", 64, "concurrent establishments and calls")
	f.BoolVar(&o.NoProxy, "no-proxy", false, "talk to the server directly, not through embedded Toxiproxy")
	f.StringVar(&kinds, "clients", bench.Lean+","+bench.GoSDK, "client kinds to measure, comma-separated: "+strings.Join(bench.Kinds(), ", "))
	f.StringVar(&jsonOut, "json", "", "also write the results as JSON to this file (- for stdout)")
	f.DurationVar(&hold, "hold", 0, "keep the sessions held this long after reading them (for an outside reading of /proc)")
	f.StringVar(&profiles, "heap-profiles", "", "write a heap profile of each measuring process's held sessions into this directory (KIND.heap.pb.gz; its memory figures then include the profiler's)")
	f.StringVar(&child, "child", "", "")
	_ = f.MarkHidden("child")
	return cmd
}

// benchParent checks the flags, measures (bench.Compare) and prints the table, on stderr when
// --json - puts the JSON alone on stdout.
func benchParent(ctx context.Context, o bench.Options, kinds []string, hold time.Duration, profiles, jsonOut string, stdout, stderr io.Writer) error {
	if err := checkJSONOut(jsonOut); err != nil {
		return err
	}
	for _, k := range kinds {
		if !slices.Contains(bench.Kinds(), k) {
			return usagef("--clients: unknown client kind %q (want any of %s)", k, strings.Join(bench.Kinds(), ", "))
		}
	}
	self, err := shards.Self()
	if err != nil {
		return err
	}
	rep, err := bench.Compare(ctx, self, o, kinds, hold, profiles, stderr)
	if err != nil {
		return err
	}
	if jsonOut == "-" {
		rep.Write(stderr) // the JSON goes to stdout alone
	} else {
		rep.Write(stdout)
	}
	if jsonOut != "" {
		data, _ := json.MarshalIndent(rep, "", "  ")
		return outfile.Write(jsonOut, stdout, append(data, '\n'))
	}
	return nil
}
