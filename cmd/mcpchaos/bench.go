package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/bench"
	"github.com/mcpchaos/mcpchaos/outfile"
)

func newBenchCmd() *cobra.Command {
	var (
		o       bench.Options
		kinds   string
		child   bool
		jsonOut string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure what a held session costs: this tool's client against the official Go SDK client",
		Long: `Measure the cost of a held session. The command starts the reference server in a process
of its own, then, for each client kind, a measuring process that holds --sessions sessions
(initialize, GET stream open) through embedded Toxiproxy, drives --rounds rounds of one
tools/call per session, and times --probes probes beside bare HTTP round trips. It prints
per-session memory (RSS growth), goroutines (outside Toxiproxy), descriptors, CPU per call and
the establishment rate for both kinds side by side, with their ratios, and the reference
server's own per-session cost.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Sessions < 1 || o.Rounds < 0 || o.Probes < 0 {
				return usagef("--sessions must be at least 1; --rounds and --probes at least 0")
			}
			if child {
				// The measuring process prints its result while it still holds its sessions,
				// then holds them until the parent closes its stdin (so the parent can read the
				// server's cost), and only then ends them.
				return bench.Run(cmd.Context(), o, func(r *bench.Result) error {
					if err := json.NewEncoder(cmd.OutOrStdout()).Encode(r); err != nil {
						return err
					}
					_, _ = io.Copy(io.Discard, cmd.InOrStdin())
					return nil
				})
			}
			return benchParent(cmd.Context(), o, strings.Split(kinds, ","), jsonOut, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Sessions, "sessions", 1000, "sessions to hold per client kind")
	f.IntVar(&o.Rounds, "rounds", 3, "rounds of one tools/call per session")
	f.IntVar(&o.Probes, "probes", 500, "probes and bare round trips to time")
	f.IntVar(&o.Workers, "workers", 64, "concurrent establishments and calls")
	f.BoolVar(&o.NoProxy, "no-proxy", false, "talk to the server directly, not through embedded Toxiproxy")
	f.StringVar(&kinds, "clients", bench.Lean+","+bench.GoSDK, "client kinds to measure, comma-separated")
	f.StringVar(&jsonOut, "json", "", "also write the results as JSON to this file (- for stdout)")
	// The measuring process: one client kind against a given URL.
	f.BoolVar(&child, "child", false, "")
	f.StringVar(&o.Client, "client", bench.Lean, "")
	f.StringVar(&o.URL, "url", "", "")
	_ = f.MarkHidden("child")
	_ = f.MarkHidden("client")
	_ = f.MarkHidden("url")
	return cmd
}

type benchReport struct {
	Machine string          `json:"machine"`
	Results []*bench.Result `json:"results"`
	// Target is the reference server's growth while the first kind held its sessions.
	TargetRSSPerSession float64 `json:"target_rss_per_session_bytes"`
	TargetFDsPerSession float64 `json:"target_fds_per_session"`
}

func benchParent(ctx context.Context, o bench.Options, kinds []string, jsonOut string, stdout, stderr io.Writer) error {
	if err := checkJSONOut(jsonOut); err != nil {
		return err
	}
	self, err := selfPath()
	if err != nil {
		return err
	}
	srv := exec.CommandContext(ctx, self, "serve", "--addr", "127.0.0.1:0")
	srv.Stderr = stderr
	out, err := srv.StdoutPipe()
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return fmt.Errorf("starting the reference server: %w", err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }() // our own child, by its PID
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("reading the reference server's address: %w", err)
	}
	fields := strings.Fields(line)
	if len(fields) < 5 || !strings.HasPrefix(fields[4], "http://") {
		return fmt.Errorf("unexpected first line from the reference server: %q", line)
	}
	url := fields[4]

	rep := benchReport{Machine: machine()}
	for i, kind := range kinds {
		rssBefore, fdsBefore := procStat(srv.Process.Pid)
		fmt.Fprintf(stderr, "bench: holding %d %s sessions...\n", o.Sessions, kind)
		args := []string{"bench", "--child", "--client", kind, "--url", url,
			"--sessions", strconv.Itoa(o.Sessions), "--rounds", strconv.Itoa(o.Rounds),
			"--probes", strconv.Itoa(o.Probes), "--workers", strconv.Itoa(o.Workers)}
		if o.NoProxy {
			args = append(args, "--no-proxy")
		}
		r, err := measure(ctx, self, args, stderr, func() {
			if i == 0 { // the server's growth, read while the first kind holds its sessions
				rssAfter, fdsAfter := procStat(srv.Process.Pid)
				rep.TargetRSSPerSession = float64(rssAfter-rssBefore) / float64(o.Sessions)
				rep.TargetFDsPerSession = float64(fdsAfter-fdsBefore) / float64(o.Sessions)
			}
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

// measure runs one measuring process; held is called while it still holds its sessions.
func measure(ctx context.Context, self string, args []string, stderr io.Writer, held func()) (*bench.Result, error) {
	c := exec.CommandContext(ctx, self, args...)
	c.Stderr = stderr
	stdin, err := c.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	var r bench.Result
	decErr := json.NewDecoder(stdout).Decode(&r)
	if decErr == nil {
		held()
	}
	stdin.Close()
	waitErr := c.Wait()
	if decErr != nil {
		return nil, fmt.Errorf("%v (process: %v)", decErr, waitErr)
	}
	return &r, waitErr
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
	row("sessions held", func(r *bench.Result) float64 { return float64(r.Sessions) }, "%.0f")
	row("memory (RSS growth), KiB", func(r *bench.Result) float64 { return r.RSSPerSession() / 1024 }, "%.1f")
	row("heap+stacks, KiB", func(r *bench.Result) float64 { return float64(r.HeapBytes) / float64(r.Sessions) / 1024 }, "%.1f")
	row("goroutines outside Toxiproxy", (*bench.Result).GoroutinesPerSession, "%.2f")
	row("goroutines in Toxiproxy", func(r *bench.Result) float64 { return float64(r.ProxyGoroutines) / float64(r.Sessions) }, "%.2f")
	row("descriptors", (*bench.Result).FDsPerSession, "%.2f")
	row("CPU per call, µs", func(r *bench.Result) float64 { return r.CPUPerCallUS }, "%.0f")
	row("established per second", func(r *bench.Result) float64 { return r.EstablishPerSec }, "%.0f")
	row("call errors", func(r *bench.Result) float64 { return float64(r.CallErrors) }, "%.0f")
	row("probe p50, µs", func(r *bench.Result) float64 { return float64(r.ProbeP50US) }, "%.0f")
	row("bare round trip p50, µs", func(r *bench.Result) float64 { return float64(r.BareP50US) }, "%.0f")
	row("probe p50 / bare p50", func(r *bench.Result) float64 { return float64(r.ProbeP50US) / float64(max(r.BareP50US, 1)) }, "%.2f")
	tw.Flush()
	fmt.Fprintf(w, "\nreference server per held session: %.1f KiB RSS, %.2f descriptors\n",
		rep.TargetRSSPerSession/1024, rep.TargetFDsPerSession)
}

func procStat(pid int) (rss int64, fds int) {
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for line := range strings.Lines(string(data)) {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				rss = kb << 10
			}
		}
	}
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		fds = len(ents)
	}
	return rss, fds
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
