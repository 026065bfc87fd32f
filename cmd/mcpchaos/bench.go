package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/bench"
	"github.com/mcpchaos/mcpchaos/outfile"
	"github.com/mcpchaos/mcpchaos/refserver"
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

type benchReport struct {
	Machine string          `json:"machine"`
	Results []*bench.Result `json:"results"`
	// Target is the reference server's growth while the first kind held its sessions.
	TargetRSSPerSession float64 `json:"target_rss_per_session_bytes"`
	TargetFDsPerSession float64 `json:"target_fds_per_session"`
}

func benchParent(ctx context.Context, o bench.Options, kinds []string, hold time.Duration, profiles, jsonOut string, stdout, stderr io.Writer) error {
	if err := checkJSONOut(jsonOut); err != nil {
		return err
	}
	for _, k := range kinds {
		if !slices.Contains(bench.Kinds(), k) {
			return usagef("--clients: unknown client kind %q (want any of %s)", k, strings.Join(bench.Kinds(), ", "))
		}
	}
	self, err := selfPath()
	if err != nil {
		return err
	}
	srv, url, err := startBenchServer(ctx, self, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }() // our own child, by its PID
	launch := func(ctx context.Context, spec string) *exec.Cmd {
		c := exec.CommandContext(ctx, self, "bench", "--child", spec)
		c.Stderr = stderr
		return c
	}
	rep := benchReport{Machine: machine()}
	for i, kind := range kinds {
		srvBefore, err := bench.ReadProc(srv.Process.Pid)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench: holding %d %s sessions...\n", o.Sessions, kind)
		o.Client, o.URL = kind, url
		if profiles != "" {
			o.HeapProfile = filepath.Join(profiles, kind+".heap.pb.gz")
		}
		r, err := bench.Measure(ctx, o, launch, func(pid int, r *bench.Result) error {
			if i == 0 { // the server's growth, read while the first kind holds its sessions
				at, err := bench.ReadProc(srv.Process.Pid)
				if err != nil {
					return err
				}
				rep.TargetRSSPerSession = float64(at.RSS-srvBefore.RSS) / float64(o.Sessions)
				rep.TargetFDsPerSession = float64(at.FDs-srvBefore.FDs) / float64(o.Sessions)
			}
			if hold > 0 {
				fmt.Fprintf(stderr, "bench: process %d holds %d %s sessions for %s: Rss %d kB, Pss %d kB, %d more descriptors\n",
					pid, o.Sessions, kind, hold, r.HeldRSSBytes>>10, r.HeldPSSBytes>>10, r.FDs)
				select {
				case <-time.After(hold): // an outside reading of /proc happens now
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("measuring %s: %w", kind, err)
		}
		rep.Results = append(rep.Results, r)
	}
	if jsonOut == "-" {
		printBench(stderr, &rep) // the JSON goes to stdout alone
	} else {
		printBench(stdout, &rep)
	}
	if jsonOut != "" {
		data, _ := json.MarshalIndent(rep, "", "  ")
		if err := outfile.Write(jsonOut, stdout, append(data, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// startBenchServer starts the reference server in a process of its own and returns its URL.
func startBenchServer(ctx context.Context, self string, stderr io.Writer) (*exec.Cmd, string, error) {
	srv := exec.CommandContext(ctx, self, "serve", "--addr", "127.0.0.1:0")
	srv.Stderr = stderr
	out, err := srv.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := srv.Start(); err != nil {
		return nil, "", fmt.Errorf("starting the reference server: %w", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	url, perr := refserver.ParseReadyLine(line)
	if err == nil {
		err = perr
	}
	if err != nil {
		_ = srv.Process.Kill()
		_ = srv.Wait()
		return nil, "", fmt.Errorf("reading the reference server's address: %w", err)
	}
	return srv, url, nil
}

func printBench(w io.Writer, rep *benchReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "machine: %s\n\n", rep.Machine)
	fmt.Fprint(tw, "per session\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t", r.Client)
	}
	if len(rep.Results) == 2 {
		fmt.Fprint(tw, "ratio\t")
	}
	fmt.Fprintln(tw)
	row := func(label string, v func(*bench.Result) float64, format string) {
		fmt.Fprintf(tw, "%s\t", label)
		for _, r := range rep.Results {
			fmt.Fprintf(tw, format+"\t", v(r))
		}
		if len(rep.Results) == 2 && v(rep.Results[1]) != 0 {
			fmt.Fprintf(tw, "%.2f\t", v(rep.Results[0])/v(rep.Results[1]))
		}
		fmt.Fprintln(tw)
	}
	perSession := func(v func(*bench.Result) float64) func(*bench.Result) float64 {
		return func(r *bench.Result) float64 { return v(r) / float64(r.Sessions) }
	}
	kib := func(b func(*bench.Result) int64) func(*bench.Result) float64 {
		return perSession(func(r *bench.Result) float64 { return float64(b(r)) / 1024 })
	}
	row("sessions held", func(r *bench.Result) float64 { return float64(r.Sessions) }, "%.0f")
	row("memory (RSS growth), KiB", kib(func(r *bench.Result) int64 { return r.RSSBytes }), "%.1f")
	row("memory (PSS growth), KiB", kib(func(r *bench.Result) int64 { return r.PSSBytes }), "%.1f")
	row("  of which Go heap, KiB", kib(func(r *bench.Result) int64 { return r.HeapBytes }), "%.1f")
	row("    of which live objects, KiB", kib(func(r *bench.Result) int64 { return r.LiveBytes }), "%.1f")
	row("  of which goroutine stacks, KiB", kib(func(r *bench.Result) int64 { return r.StackBytes }), "%.1f")
	row("goroutines", (*bench.Result).GoroutinesPerSession, "%.2f")
	row("descriptors", (*bench.Result).FDsPerSession, "%.2f")
	row("connections dialed to establish", perSession(func(r *bench.Result) float64 { return float64(r.EstablishDials) }), "%.2f")
	row("connections dialed per call", func(r *bench.Result) float64 { return float64(r.CallDials) / float64(max(r.Calls, 1)) }, "%.2f")
	row("CPU per call, µs", func(r *bench.Result) float64 { return r.CPUPerCallUS }, "%.0f")
	if len(rep.Results) > 0 && rep.Results[0].Proxied {
		row("Toxiproxy memory (RSS), KiB", kib(func(r *bench.Result) int64 { return r.ProxyRSSBytes }), "%.1f")
		row("Toxiproxy goroutines", perSession(func(r *bench.Result) float64 { return float64(r.ProxyGoroutines) }), "%.2f")
		row("Toxiproxy descriptors", perSession(func(r *bench.Result) float64 { return float64(r.ProxyFDs) }), "%.2f")
		row("Toxiproxy CPU per call, µs", func(r *bench.Result) float64 { return r.ProxyCPUPerCallUS }, "%.0f")
		row("Toxiproxy processes (summed)", func(r *bench.Result) float64 { return float64(r.ProxyProcesses) }, "%.0f")
	}
	row("established per second", func(r *bench.Result) float64 { return r.EstablishPerSec }, "%.0f")
	row("call errors", func(r *bench.Result) float64 { return float64(r.CallErrors) }, "%.0f")
	row("probe p50, µs", func(r *bench.Result) float64 { return float64(r.ProbeP50US) }, "%.0f")
	row("bare round trip p50, µs", func(r *bench.Result) float64 { return float64(r.BareP50US) }, "%.0f")
	row("probe p50 / bare p50", func(r *bench.Result) float64 { return float64(r.ProbeP50US) / float64(max(r.BareP50US, 1)) }, "%.2f")
	tw.Flush()
	fmt.Fprintf(w, "\nreference server per held session: %.1f KiB RSS, %.2f descriptors\n",
		rep.TargetRSSPerSession/1024, rep.TargetFDsPerSession)
}

func machine() string {
	cpus := "?"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				cpus = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs, %s", cpus, numCPU(), time.Now().UTC().Format("2006-01-02"))
}

func numCPU() int { return runtime.NumCPU() }
