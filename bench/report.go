package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpchaos/mcpchaos/refserver"
)

// Report is a benchmark's figures: per client kind measured (Result) and the reference
// server's own growth, as `mcpchaos bench` prints (Write) and writes as JSON.
type Report struct {
	Machine string    `json:"machine"`
	Results []*Result `json:"results"`
	// Target is the reference server's growth while the first kind held its sessions.
	TargetRSSPerSession float64 `json:"target_rss_per_session_bytes"`
	TargetFDsPerSession float64 `json:"target_fds_per_session"`
}

// Compare measures each client kind in turn (Measure) against one reference server, all
// started as processes of the mcpchaos executable self: the server (`serve`) and the measuring
// processes (`bench --child`). hold keeps each kind's sessions held that long, its PID said on
// stderr, for a reading of /proc from outside; profiles, when not "", is the directory of a
// heap profile per kind. The kinds must be among Kinds.
func Compare(ctx context.Context, self string, o Options, kinds []string, hold time.Duration, profiles string, stderr io.Writer) (*Report, error) {
	srv, url, err := startRefServer(ctx, self, stderr)
	if err != nil {
		return nil, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }() // our own child, by its PID
	launch := func(ctx context.Context, spec string) *exec.Cmd {
		c := exec.CommandContext(ctx, self, "bench", "--child", spec)
		c.Stderr = stderr
		return c
	}
	rep := Report{Machine: machine()}
	for i, kind := range kinds {
		srvBefore, err := ReadProc(srv.Process.Pid)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "bench: holding %d %s sessions...\n", o.Sessions, kind)
		o.Client, o.URL = kind, url
		if profiles != "" {
			o.HeapProfile = filepath.Join(profiles, kind+".heap.pb.gz")
		}
		r, err := Measure(ctx, o, launch, func(pid int, r *Result) error {
			at, err := ReadProc(srv.Process.Pid)
			if err != nil {
				return err
			}
			r.TargetEstablishCPUUS = perSessionUS(at.CPU-srvBefore.CPU, o.Sessions)
			if i == 0 { // the server's growth, read while the first kind holds its sessions
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
			return nil, fmt.Errorf("measuring %s: %w", kind, err)
		}
		rep.Results = append(rep.Results, r)
	}
	return &rep, nil
}

// startRefServer starts the reference server in a process of its own and returns its URL.
func startRefServer(ctx context.Context, self string, stderr io.Writer) (*exec.Cmd, string, error) {
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

// Write prints the report as a table: a column per kind, their ratio when there are two.
func (rep *Report) Write(w io.Writer) {
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
	row := func(label string, v func(*Result) float64, format string) {
		fmt.Fprintf(tw, "%s\t", label)
		for _, r := range rep.Results {
			fmt.Fprintf(tw, format+"\t", v(r))
		}
		if len(rep.Results) == 2 && v(rep.Results[1]) != 0 {
			fmt.Fprintf(tw, "%.2f\t", v(rep.Results[0])/v(rep.Results[1]))
		}
		fmt.Fprintln(tw)
	}
	perSession := func(v func(*Result) float64) func(*Result) float64 {
		return func(r *Result) float64 { return v(r) / float64(r.Sessions) }
	}
	kib := func(b func(*Result) int64) func(*Result) float64 {
		return perSession(func(r *Result) float64 { return float64(b(r)) / 1024 })
	}
	row("sessions held", func(r *Result) float64 { return float64(r.Sessions) }, "%.0f")
	row("memory (RSS growth), KiB", kib(func(r *Result) int64 { return r.RSSBytes }), "%.1f")
	row("memory (PSS growth), KiB", kib(func(r *Result) int64 { return r.PSSBytes }), "%.1f")
	row("  of which Go heap, KiB", kib(func(r *Result) int64 { return r.HeapBytes }), "%.1f")
	row("    of which live objects, KiB", kib(func(r *Result) int64 { return r.LiveBytes }), "%.1f")
	row("  of which goroutine stacks, KiB", kib(func(r *Result) int64 { return r.StackBytes }), "%.1f")
	row("goroutines", (*Result).GoroutinesPerSession, "%.2f")
	row("descriptors", (*Result).FDsPerSession, "%.2f")
	row("connections dialed to establish", perSession(func(r *Result) float64 { return float64(r.EstablishDials) }), "%.2f")
	row("connections dialed per call", func(r *Result) float64 { return float64(r.CallDials) / float64(max(r.Calls, 1)) }, "%.2f")
	row("CPU per call, µs", func(r *Result) float64 { return r.CPUPerCallUS }, "%.0f")
	if len(rep.Results) > 0 && rep.Results[0].Proxied {
		row("Toxiproxy memory (RSS), KiB", kib(func(r *Result) int64 { return r.ProxyRSSBytes }), "%.1f")
		row("Toxiproxy goroutines", perSession(func(r *Result) float64 { return float64(r.ProxyGoroutines) }), "%.2f")
		row("Toxiproxy descriptors", perSession(func(r *Result) float64 { return float64(r.ProxyFDs) }), "%.2f")
		row("Toxiproxy CPU per call, µs", func(r *Result) float64 { return r.ProxyCPUPerCallUS }, "%.0f")
		row("Toxiproxy processes (summed)", func(r *Result) float64 { return float64(r.ProxyProcesses) }, "%.0f")
	}
	row("established per second", func(r *Result) float64 { return r.EstablishPerSec }, "%.0f")
	row("CPU to establish, µs", func(r *Result) float64 { return r.EstablishCPUUS }, "%.0f")
	if len(rep.Results) > 0 && rep.Results[0].Proxied {
		row("  Toxiproxy's, µs", func(r *Result) float64 { return r.ProxyEstablishCPUUS }, "%.0f")
	}
	row("  the server's, µs", func(r *Result) float64 { return r.TargetEstablishCPUUS }, "%.0f")
	row("call errors", func(r *Result) float64 { return float64(r.CallErrors) }, "%.0f")
	row("probe p50, µs", func(r *Result) float64 { return float64(r.ProbeP50US) }, "%.0f")
	row("bare round trip p50, µs", func(r *Result) float64 { return float64(r.BareP50US) }, "%.0f")
	row("probe p50 / bare p50", func(r *Result) float64 { return float64(r.ProbeP50US) / float64(max(r.BareP50US, 1)) }, "%.2f")
	tw.Flush()
	fmt.Fprintf(w, "\nreference server per held session: %.1f KiB RSS, %.2f descriptors\n",
		rep.TargetRSSPerSession/1024, rep.TargetFDsPerSession)
}

// machine names the processor, its count and the day: the figures are this machine's.
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
	return fmt.Sprintf("%s, %d CPUs, %s", cpus, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
}
