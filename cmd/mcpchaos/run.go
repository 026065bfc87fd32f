package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/clients"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/target"
	"github.com/mcpchaos/mcpchaos/workloads"
)

type runFlags struct {
	out      string
	progress string // auto, bars, lines, off
	quiet    bool
}

func newRunCmd() *cobra.Command {
	var fl runFlags
	cmd := &cobra.Command{
		Use:   "run WORKLOAD",
		Short: "Run a workload: a fleet of sessions, faults, TTLs running out; export the numbers",
		Long: `Run a workload. WORKLOAD is a file path or the name of a built-in workload
(` + joinNames() + `).

The run starts the built-in reference MCP server, one Toxiproxy proxy per client group in
front of it, and the client fleet; applies the fault schedule; and when the planned time is
up writes the JSON export (--out, default ./mcpchaos-results/<workload>-<time>.json) and prints
a summary. Ctrl-C stops the run early: the partial export is still written, marked
interrupted, and the exit status is 130.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			switch fl.progress {
			case "auto", "bars", "lines", "off":
			default:
				return usagef("--progress %q: want auto, bars, lines or off", fl.progress)
			}
			w, err := workloads.Resolve(a[0])
			if err != nil {
				return err
			}
			return run(cmd.Context(), w, fl, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&fl.out, "out", "o", "", "where to write the JSON export (default ./mcpchaos-results/<workload>-<time>.json)")
	f.StringVar(&fl.progress, "progress", "auto", "live progress: auto (bars on a terminal, lines elsewhere), bars, lines, off")
	f.BoolVarP(&fl.quiet, "quiet", "q", false, "print no summary table")
	return cmd
}

// runner holds one run's parts, so that teardown can find them on every exit path.
type runner struct {
	w       *workloads.Workload
	inst    *target.Instance
	inj     faults.Injector
	fleets  []*clients.Fleet
	recs    []*metrics.Group
	proxies map[string]string // group → proxy listen address

	faultMu  sync.Mutex
	faultLog []results.FaultAt
}

func run(ctx context.Context, w *workloads.Workload, fl runFlags, stdout, stderr io.Writer) (err error) {
	r := &runner{w: w, proxies: make(map[string]string)}
	defer r.close()
	if err := r.setUp(ctx); err != nil {
		return err
	}

	start := time.Now().Add(20 * time.Millisecond) // every group's clock starts together
	runCtx, cancel := context.WithDeadline(ctx, start.Add(w.Duration))
	defer cancel()

	var wg sync.WaitGroup
	var faultErr error
	wg.Go(func() {
		faultErr = faults.RunSchedule(runCtx, r.inj, start, r.schedule(), r.noteFault(start))
	})
	for _, f := range r.fleets {
		wg.Go(func() { f.Run(runCtx, start) })
	}
	stopProgress := startProgress(fl.progress, stderr, start, w.Duration, r.fleets, r.recs)
	wg.Wait()
	stopProgress()
	end := time.Now()

	interrupted := ctx.Err() != nil
	exp, err := r.export(start, end, interrupted, faultErr)
	if err != nil {
		return err
	}
	out := fl.out
	if out == "" {
		out = results.DefaultPath(w.Name, start)
	}
	if err := results.WriteFile(out, exp); err != nil {
		return fmt.Errorf("writing the export: %w", err)
	}
	if !fl.quiet {
		fmt.Fprintf(stdout, "\nmcpchaos: %s against %s, %s%s\n\n", w.Name, exp.Run.Target,
			end.Sub(start).Round(time.Millisecond), map[bool]string{true: " (interrupted)", false: ""}[interrupted])
		if err := results.WriteSummary(stdout, exp); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "\nexport: %s\n", out)
	switch {
	case interrupted:
		return errInterrupted
	case faultErr != nil:
		return fmt.Errorf("fault schedule: %w", faultErr)
	}
	return nil
}

// setUp starts the target, one proxy per group in front of it, and the fleets.
func (r *runner) setUp(ctx context.Context) error {
	w := r.w
	if w.Target.Builtin == nil {
		return errors.New("this workload names no built-in target; targets by URL come in a later version")
	}
	cfg := targetConfig(w.Target.Builtin).WithDefaults()
	inst, err := target.Start("127.0.0.1:0", cfg)
	if err != nil {
		return fmt.Errorf("starting the reference server: %w", err)
	}
	r.inst = inst
	u, err := url.Parse(inst.URL)
	if err != nil {
		return err
	}
	inj, err := faults.NewEmbedded()
	if err != nil {
		return fmt.Errorf("starting Toxiproxy: %w", err)
	}
	r.inj = inj
	truth := clients.TruthFunc(inst.Server.DeathTime)
	for _, g := range w.Groups {
		listen, err := inj.AddProxy(ctx, proxyName(g.Name), u.Host)
		if err != nil {
			return fmt.Errorf("group %s: starting its proxy: %w", g.Name, err)
		}
		r.proxies[g.Name] = listen
		pol, err := clients.NewPolicy(g.Policy, clients.PolicyConfig{Retries: g.Retries})
		if err != nil {
			return &usageError{fmt.Errorf("group %s: %w", g.Name, err)}
		}
		ep := &clients.Endpoint{
			URL:            (&url.URL{Scheme: "http", Host: listen, Path: u.Path}).String(),
			HTTP:           &http.Client{Transport: clients.NewTransport(g.Clients * (g.Concurrency + 1))},
			Protocol:       g.Protocol,
			RequestTimeout: g.RequestTimeout,
			MaxBody:        4 << 20,
			MaxEvent:       1 << 20,
			ClientName:     "mcpchaos-" + g.Name,
		}
		rec := metrics.NewGroup(g.Name, g.Policy, g.Clients)
		fc := clients.GroupConfig{
			Name:           g.Name,
			Clients:        g.Clients,
			Ramp:           g.Ramp,
			Policy:         pol,
			Probe:          g.Probe,
			DeadStatuses:   g.DeadStatuses,
			RetryBackoff:   g.RetryBackoff,
			CallEvery:      g.CallEvery,
			Tool:           g.Tool,
			Concurrency:    g.Concurrency,
			ReconnectDelay: 100 * time.Millisecond,
			ReconnectMax:   time.Second,
		}
		r.recs = append(r.recs, rec)
		r.fleets = append(r.fleets, clients.NewFleet(fc, ep, rec, truth, callsOn(w.Phases)))
	}
	return nil
}

// callsOn says, for a time since the start, whether the workload's phase then makes calls.
func callsOn(phases []workloads.Phase) func(time.Duration) bool {
	return func(el time.Duration) bool {
		for _, p := range phases {
			if el >= p.Start && el < p.End() {
				return p.Calls
			}
		}
		return false
	}
}

func proxyName(group string) string { return "mcpchaos-" + group }

// schedule turns the workload's faults into the injector's schedule.
func (r *runner) schedule() []faults.Scheduled {
	var s []faults.Scheduled
	for _, f := range r.w.Faults {
		var proxies []string
		for _, g := range r.w.Groups {
			if f.AppliesTo(g.Name) {
				proxies = append(proxies, proxyName(g.Name))
			}
		}
		s = append(s, faults.Scheduled{
			Fault:   faults.Toxic{Name: f.Name, Type: f.Toxic, Stream: f.Stream, Attributes: f.Attributes},
			Proxies: proxies,
			At:      f.At,
			For:     f.For,
		})
	}
	return s
}

// noteFault records when each fault really went on and off each proxy.
func (r *runner) noteFault(start time.Time) func(faults.Change) {
	return func(c faults.Change) {
		r.faultMu.Lock()
		defer r.faultMu.Unlock()
		if c.Added {
			fa := results.FaultAt{Fault: c.Fault, Proxy: c.Proxy, AddedAtS: c.At.Seconds()}
			if c.Err != nil {
				fa.Error = c.Err.Error()
			}
			r.faultLog = append(r.faultLog, fa)
			return
		}
		for i := len(r.faultLog) - 1; i >= 0; i-- {
			if fa := &r.faultLog[i]; fa.Fault == c.Fault && fa.Proxy == c.Proxy && fa.RemovedAtS == 0 {
				fa.RemovedAtS = c.At.Seconds()
				break
			}
		}
	}
}

func (r *runner) export(start, end time.Time, interrupted bool, faultErr error) (*results.Export, error) {
	run := results.Run{
		Tool:           "mcpchaos",
		ToolVersion:    version,
		Workload:       r.w.Name,
		WorkloadSource: r.w.Source,
		WorkloadHash:   r.w.Hash,
		Target:         "builtin",
		Start:          start,
		End:            end,
		PlannedSeconds: r.w.Duration.Seconds(),
		Interrupted:    interrupted,
		Proxies:        r.proxies,
	}
	if faultErr != nil {
		run.Error = faultErr.Error()
	}
	for _, f := range r.fleets {
		if p := f.Protocol(); p != "" {
			run.NegotiatedProtocol = p
			break
		}
	}
	snaps := make([]*metrics.Snapshot, len(r.recs))
	for i, rec := range r.recs {
		snaps[i] = rec.Snapshot()
	}
	exp, err := results.Build(run, snaps)
	if err != nil {
		return nil, err
	}
	r.faultMu.Lock()
	exp.Faults = append([]results.FaultAt(nil), r.faultLog...)
	r.faultMu.Unlock()
	return exp, nil
}

// close tears everything down; safe on every exit path.
func (r *runner) close() {
	if r.inj != nil {
		if err := r.inj.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "mcpchaos: removing proxies:", err)
		}
	}
	if r.inst != nil {
		r.inst.Close()
	}
}
