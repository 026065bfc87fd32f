package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/redact"
	"github.com/mcpchaos/mcpchaos/refserver"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// serveHelp is the command's help, beside the function that builds it.
const serveHelp = `Run the built-in reference MCP server standalone, for pointing other clients at it or for
running it in a process of its own. Its regime comes from flags, or from a workload's
target.builtin section with --from (flags given beside --from override it). It listens on loopback unless --public is given, and
stops on Ctrl-C. Its own Prometheus metrics (sessions held, event logs, requests by status,
RSS: docs/metrics.md) are at /metrics beside the MCP endpoint, and at --metrics-addr too.`

func newServeCmd() *cobra.Command {
	var (
		addr   string
		from   string
		public bool
		cfg    refserver.Config
		getVal string
		topo   refserver.Topology
		mAddr  string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the reference MCP server on its own",
		Long:  serveHelp,
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, topo, err := serveSettings(cmd, from, cfg, topo, getVal)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("max-sessions") && cfg.MaxSessions == 0 {
				cfg.MaxSessions = defaultServeSessions // --from a workload without max_sessions too
			}
			if err := checkListenAddr("--addr", addr, "127.0.0.1:8080", public, "pass --public to listen there"); err != nil {
				return err
			}
			if !slices.Contains(refserver.EvictedCursors(), cfg.EvictedCursor) && cmd.Flags().Changed("evicted-cursor") {
				return usagef("--evicted-cursor %q: want one of %s", cfg.EvictedCursor, strings.Join(refserver.EvictedCursors(), ", "))
			}
			cfg = cfg.WithDefaults()
			if err := cfg.Validate(); err != nil {
				return &usageError{err}
			}
			if err := topo.Validate(); err != nil {
				return &usageError{err}
			}
			inst, err := refserver.StartTopology(addr, cfg, topo)
			if err != nil {
				return err
			}
			defer inst.Close()
			fmt.Fprintln(cmd.OutOrStdout(), refserver.ReadyLine(inst.URL, cfg))
			if err := serveRefMetrics(cmd, inst, cfg, mAddr, public); err != nil {
				return err
			}
			if inst.Cluster != nil {
				t := inst.Cluster.Topology()
				fmt.Fprintf(cmd.OutOrStdout(), "  %d replicas behind a %s router, event log %s\n", t.Replicas, t.Routing, redact.URLString(t.EventLog))
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	serveFlags(cmd.Flags(), &addr, &public, &from, &cfg, &getVal, &topo, &mAddr)
	return cmd
}

// serveFlags registers serve's flags on f, into the variables newServeCmd reads.
func serveFlags(f *pflag.FlagSet, addr *string, public *bool, from *string, cfg *refserver.Config, getVal *string, topo *refserver.Topology, mAddr *string) {
	f.StringVar(addr, "addr", "127.0.0.1:8080", "listen address (HOST:PORT)")
	f.BoolVar(public, "public", false, "allow a non-loopback listen address")
	f.StringVar(from, "from", "", "take the server's settings from this workload's target.builtin")
	f.DurationVar(&cfg.SessionTTL, "ttl", 0, "session TTL, sliding, refreshed by session-scoped POSTs (0: never expire)")
	f.DurationVar(&cfg.Retention, "retention", 0, "event-log retention, independent of the session's life")
	f.IntVar(&cfg.RetentionEvents, "retention-events", 0, "events kept per session log (0: default)")
	f.StringVar(getVal, "get-validation", "permissive", "permissive (cursor only, as in the seed) or strict")
	f.IntVar(&cfg.DeadStatus, "dead-status", 0, "status for a dead session (0: 404)")
	f.StringVar(&cfg.DeadBody, "dead-body", "", `body for a dead session (default {"error":"session expired"})`)
	f.StringVar(&cfg.EvictedCursor, "evicted-cursor", refserver.EvictedUnknown, "a live session's resume from a cursor its log evicted: unknown (answered as an unknown cursor: 400) or dead (the same answer as expiry: --dead-status, --dead-body)")
	f.DurationVar(&cfg.NotifyInterval, "notify-interval", 0, "server notifications on each live session's stream (0: off)")
	f.DurationVar(&cfg.Keepalive, "keepalive", 0, "keep-alives on open streams this often, of --keepalive-shape (0: off)")
	f.StringVar(&cfg.KeepaliveShape, "keepalive-shape", "", "what a keep-alive is: comment (`: ping`, the default), event (`event: ping` with data), no-id (a data event without id:) or none")
	f.DurationVar(&cfg.Retry, "retry", 0, "SSE retry: value sent with priming events (0: not sent)")
	f.IntVar(&topo.Replicas, "replicas", 1, "replicas behind the embedded session-affinity router")
	f.StringVar(&topo.Routing, "routing", refserver.RouteSticky, "how the router picks a replica: sticky, round-robin or hash")
	f.StringVar(&topo.EventLog, "event-log", refserver.LogPerReplica, "per-replica, shared, or a Redis URL (redis://127.0.0.1:6379/0)")
	f.IntVar(&cfg.MaxSessions, "max-sessions", defaultServeSessions, "sessions held at most; initialize answers 503 beyond (0: no cap)")
	f.BoolVar(&cfg.Leak, "leak", false, "never reclaim a dead session (a server that leaks): sessions held only grow")
	f.BoolVar(&cfg.StreamConflict, "stream-conflict", false, "answer 409 to a resume of a session's GET stream while another connection holds it, as the Go and TS SDK servers do (default: the resume takes the stream over)")
	f.StringVar(mAddr, "metrics-addr", "", "also serve the server's Prometheus metrics at http://HOST:PORT/metrics (they are at /metrics of --addr anyway)")
}

// defaultServeSessions caps the sessions a standalone server holds unless told otherwise, as a
// real server's connection and session limits do: without one, anything pointed at it (a
// client that never ends its sessions) grows it without bound (issue 30: 20,000 held).
const defaultServeSessions = 10_000

// serveSettings is the server's regime: the flags, or with --from a workload's target.builtin
// with the flags given explicitly laid over it.
func serveSettings(cmd *cobra.Command, from string, cfg refserver.Config, topo refserver.Topology, getVal string) (refserver.Config, refserver.Topology, error) {
	if from != "" {
		w, err := workloads.Resolve(from)
		if err != nil {
			return cfg, topo, err
		}
		if w.Target.Builtin == nil {
			return cfg, topo, usagef("--from %s: the workload has no target.builtin section", from)
		}
		flags, flagTopo := cfg, topo
		cfg, topo = engine.Reference(w.Target.Builtin)
		overrideFromFlags(cmd, &cfg, &topo, flags, flagTopo)
	}
	if from == "" || cmd.Flags().Changed("get-validation") {
		cfg.GetValidation = refserver.GetValidation(getVal)
	}
	return cfg, topo, checkKeepaliveFlags(cfg)
}

// checkKeepaliveFlags names the flags when the keep-alive settings do not go together (the
// server's own check would name its config fields).
func checkKeepaliveFlags(cfg refserver.Config) error {
	switch shape := cfg.KeepaliveShape; {
	case shape != "" && !slices.Contains(refserver.KeepaliveShapes(), shape):
		return usagef("--keepalive-shape %q: want one of %s", shape, strings.Join(refserver.KeepaliveShapes(), ", "))
	case shape != "" && shape != refserver.KeepaliveNone && cfg.Keepalive <= 0:
		return usagef("--keepalive-shape %s needs an interval: add --keepalive 15s (or the interval you want)", shape)
	}
	return nil
}

// overrideFromFlags lays the flags the user gave explicitly over the settings a workload's
// target.builtin gave (serve --from): a flag on the command line always wins, as everywhere
// else in mcpchaos; a flag left at its default never replaces the workload's value.
func overrideFromFlags(cmd *cobra.Command, cfg *refserver.Config, topo *refserver.Topology, f refserver.Config, ft refserver.Topology) {
	set := cmd.Flags().Changed
	for name, apply := range map[string]func(){
		"ttl":              func() { cfg.SessionTTL = f.SessionTTL },
		"retention":        func() { cfg.Retention = f.Retention },
		"retention-events": func() { cfg.RetentionEvents = f.RetentionEvents },
		"dead-status":      func() { cfg.DeadStatus = f.DeadStatus },
		"dead-body":        func() { cfg.DeadBody = f.DeadBody },
		"evicted-cursor":   func() { cfg.EvictedCursor = f.EvictedCursor },
		"notify-interval":  func() { cfg.NotifyInterval = f.NotifyInterval },
		"keepalive":        func() { cfg.Keepalive = f.Keepalive },
		"keepalive-shape":  func() { cfg.KeepaliveShape = f.KeepaliveShape },
		"retry":            func() { cfg.Retry = f.Retry },
		"max-sessions":     func() { cfg.MaxSessions = f.MaxSessions },
		"leak":             func() { cfg.Leak = f.Leak },
		"stream-conflict":  func() { cfg.StreamConflict = f.StreamConflict },
		"replicas":         func() { topo.Replicas = ft.Replicas },
		"routing":          func() { topo.Routing = ft.Routing },
		"event-log":        func() { topo.EventLog = ft.EventLog },
	} {
		if set(name) {
			apply()
		}
	}
}

// serveRefMetrics says where the server's metrics are and, with --metrics-addr, serves them
// there too until the command ends.
func serveRefMetrics(cmd *cobra.Command, inst *refserver.Instance, cfg refserver.Config, addr string, public bool) error {
	out := cmd.OutOrStdout()
	fmt.Fprintln(out, refserver.MetricsLine(inst.Addr, cfg))
	if addr == "" {
		return nil
	}
	if err := checkListenAddr("--metrics-addr", addr, "127.0.0.1:9465", public, "pass --public to serve there"); err != nil {
		return err
	}
	at, err := inst.ServeMetrics(cmd.Context(), addr)
	if err != nil {
		return fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	fmt.Fprintf(out, "  metrics also at http://%s%s\n", at, refserver.MetricsPath)
	return nil
}
