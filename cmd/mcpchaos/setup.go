package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/clients"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// targetInfo is what setUp learnt about the target, for the export.
type targetInfo struct {
	label      string // "builtin", or the target's URL
	estimated  bool   // deaths are estimated from a declared TTL, not known
	prefix     string // the run's proxy name prefix on an external toxiproxy-server
	toxiproxy  string // its API URL
	generation clients.Generation
	notes      []string
}

// setUp starts the target (or reaches it by URL), one proxy per group in front of it, and the
// fleets. Whatever it created before failing, r.close removes.
func (r *runner) setUp(ctx context.Context) error {
	w := r.w
	conn, truth, err := r.reachTarget()
	if err != nil {
		return err
	}
	if err := r.prepareActions(); err != nil {
		return err
	}
	if err := r.startInjector(ctx); err != nil {
		return err
	}
	upstream := clients.HostPort(conn.URL)
	gen, err := r.negotiate(ctx, conn)
	if err != nil {
		return err
	}
	for _, g := range w.Groups {
		listen, err := r.inj.AddProxy(ctx, proxyName(g.Name), upstream)
		if err != nil {
			return fmt.Errorf("group %s: starting its proxy: %w", g.Name, err)
		}
		r.proxies[g.Name] = listen
		pol, err := clients.NewPolicy(g.Policy, clients.PolicyConfig{Retries: g.Retries})
		if err != nil {
			return &usageError{fmt.Errorf("group %s: %w", g.Name, err)}
		}
		gc := conn
		gc.Dial = listen
		gc.MaxConns = g.Clients * (g.Concurrency + 1)
		hc, err := clients.NewHTTPClient(gc)
		if err != nil {
			return &usageError{fmt.Errorf("target: %w", err)}
		}
		ep := &clients.Endpoint{
			URL:            conn.URL.String(),
			HTTP:           hc,
			Protocol:       g.Protocol,
			Generation:     gen.Generation,
			RequestTimeout: g.RequestTimeout,
			MaxBody:        4 << 20,
			MaxEvent:       1 << 20,
			ClientName:     "mcpchaos-" + g.Name,
		}
		if gen.Generation == clients.Stateless {
			ep.Protocol = gen.Protocol
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

// reachTarget starts the reference server, or prepares the connection to a target by URL:
// headers expanded from the environment, certificates loaded. It returns the Truth about
// session deaths: exact from the reference server, estimated from a declared TTL otherwise.
func (r *runner) reachTarget() (clients.Conn, clients.Truth, error) {
	t := r.w.Target
	if t.Builtin != nil {
		cfg := targetConfig(t.Builtin).WithDefaults()
		inst, err := r.startBuiltin(cfg)
		if err != nil {
			return clients.Conn{}, nil, fmt.Errorf("starting the reference server: %w", err)
		}
		r.inst = inst
		u, err := url.Parse(inst.URL)
		if err != nil {
			return clients.Conn{}, nil, err
		}
		r.tgt.label = "builtin"
		return clients.Conn{URL: u}, clients.TruthFunc(inst.DeathTime), nil
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return clients.Conn{}, nil, &usageError{fmt.Errorf("%s: target.url: %w", t.Where, err)}
	}
	header, err := t.ExpandHeaders(os.LookupEnv)
	if err != nil {
		return clients.Conn{}, nil, &usageError{err}
	}
	conn := clients.Conn{URL: u, Header: header, InsecureSkipVerify: t.InsecureSkipVerify, HTTP2: t.HTTP2}
	if t.CAFile != "" {
		if conn.RootCAs, err = clients.LoadCAFile(t.CAFile); err != nil {
			return clients.Conn{}, nil, &usageError{fmt.Errorf("target.ca_file: %w", err)}
		}
	}
	r.tgt.label = redactURL(u)
	r.tgt.estimated = true
	if t.SessionTTL <= 0 {
		r.tgt.notes = append(r.tgt.notes, "the target declares no session_ttl: session deaths could not be estimated, so detection_delay, dead-session counts and false_healthy_seconds cover only what the server's answers revealed")
	}
	return conn, clients.NewEstimated(t.SessionTTL), nil
}

// startInjector starts embedded Toxiproxy, or connects to the workload's toxiproxy-server and
// checks every fault against it before anything runs.
func (r *runner) startInjector(ctx context.Context) error {
	if r.w.Toxiproxy == "" {
		inj, err := faults.NewEmbedded()
		if err != nil {
			return fmt.Errorf("starting Toxiproxy: %w", err)
		}
		r.inj = inj
		return nil
	}
	ext, err := faults.NewExternal(r.w.Toxiproxy, faults.NewRunPrefix(), "")
	if err != nil {
		return err
	}
	r.inj = ext
	r.ext.Store(ext)
	r.tgt.prefix, r.tgt.toxiproxy = ext.Prefix(), r.w.Toxiproxy
	for _, f := range r.w.Faults {
		if f.Action != nil {
			continue // not a toxic: nothing to check on the toxiproxy-server
		}
		t := faults.Toxic{Name: f.Name, Type: f.Toxic, Stream: f.Stream, Attributes: f.Attributes}
		if err := ext.Check(ctx, []faults.Toxic{t}); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &usageError{fmt.Errorf("%s: %w", f.Where, err)}
		}
	}
	return nil
}

// negotiate learns which protocol generation the target speaks, on a connection of its own
// (straight to the target, not through a proxy: no fault may decide it).
func (r *runner) negotiate(ctx context.Context, conn clients.Conn) (clients.Negotiated, error) {
	hc, err := clients.NewHTTPClient(conn)
	if err != nil {
		return clients.Negotiated{}, &usageError{fmt.Errorf("target: %w", err)}
	}
	defer hc.CloseIdleConnections()
	ep := &clients.Endpoint{URL: conn.URL.String(), HTTP: hc, Protocol: r.w.Groups[0].Protocol,
		RequestTimeout: r.w.Groups[0].RequestTimeout, MaxBody: 4 << 20, MaxEvent: 1 << 20, ClientName: "mcpchaos"}
	n, err := ep.Negotiate(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		return n, fmt.Errorf("target %s: %w", r.tgt.label, err)
	}
	r.tgt.generation = n.Generation
	if n.Generation == clients.Stateless {
		r.tgt.notes = append(r.tgt.notes, fmt.Sprintf(
			"the target speaks only the stateless revision %s: it has no sessions, no GET stream and no resumption, so the session scenarios do not apply (%s are not measured); what applies is measured: requests lost in flight when a fault cuts their response (requests_lost), re-issued with a new id (requests_reissued), the time until a re-issued request got its result (recovery_latency), and tool_call_latency",
			n.Protocol, strings.Join(clients.SessionOnlyMetrics(), ", ")))
	}
	return n, nil
}

// describeTarget fills in what the export says about the target.
func (r *runner) describeTarget(run *results.Run) {
	run.Target = r.tgt.label
	run.DetectionDelayEstimated = r.tgt.estimated
	run.Generation = r.tgt.generation.String()
	run.Notes = append(run.Notes, r.tgt.notes...)
	if r.tgt.prefix != "" {
		run.Notes = append(run.Notes, fmt.Sprintf("proxies were created on the toxiproxy-server %s under the prefix %s and removed at the end; if a run was killed, `mcpchaos faults clean --toxiproxy %s` removes what it left",
			r.tgt.toxiproxy, r.tgt.prefix, r.tgt.toxiproxy))
	}
	for _, f := range r.fleets {
		if na := f.NotObservable(); len(na) > 0 {
			if run.NotObservable == nil {
				run.NotObservable = map[string][]string{}
			}
			run.NotObservable[f.Name()] = na
		}
	}
}

// redactURL is a URL fit for output: no credentials, no query (which may carry a key).
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		c.RawQuery = "…"
	}
	return c.String()
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

// proxyName names a group's proxy; an external toxiproxy-server's proxies also bear the run's
// prefix.
func proxyName(group string) string { return group }

// targetFlags are the run's command-line overrides of the workload's target and injector.
type targetFlags struct {
	url        string
	sessionTTL time.Duration
	headers    []string
	caFile     string
	insecure   bool
	http2      bool
	toxiproxy  string
	set        func(name string) bool
}

func (tf *targetFlags) register(f *pflag.FlagSet) {
	f.StringVar(&tf.url, "target", "", "run against the MCP server at this URL instead of the workload's target (http:// or https://)")
	f.DurationVar(&tf.sessionTTL, "session-ttl", 0, "the target's session TTL, declared: phases that wait for ttl use it, and detection delays are estimated from it")
	f.StringArrayVar(&tf.headers, "header", nil, `extra request header "Name: value" for a URL target, repeatable; ${VAR} is taken from the environment`)
	f.StringVar(&tf.caFile, "ca-file", "", "PEM certificates to trust for an https target")
	f.BoolVar(&tf.insecure, "insecure-skip-verify", false, "accept any certificate from an https target (never in production)")
	f.BoolVar(&tf.http2, "http2", false, "speak HTTP/2 to a URL target (h2 over TLS, h2c over plain http) instead of HTTP/1.1")
	f.StringVar(&tf.toxiproxy, "toxiproxy", "", "create the proxies on the toxiproxy-server with this API URL (e.g. http://127.0.0.1:8474) instead of embedded Toxiproxy")
	tf.set = func(name string) bool { return f.Changed(name) }
}

// apply returns the workload with the flags' overrides.
func (tf *targetFlags) apply(w *workloads.Workload) (*workloads.Workload, error) {
	if tf.set == nil {
		return w, nil
	}
	if tf.set("toxiproxy") {
		if msg := workloads.CheckToxiproxyURL(tf.toxiproxy); msg != "" {
			return nil, usagef("--toxiproxy %s", msg)
		}
		c := *w
		c.Toxiproxy = tf.toxiproxy
		w = &c
	}
	changed := false
	for _, n := range []string{"target", "session-ttl", "header", "ca-file", "insecure-skip-verify", "http2"} {
		changed = changed || tf.set(n)
	}
	if !changed {
		return w, nil
	}
	t := w.Target
	if tf.set("target") {
		if msg := workloads.CheckURL(tf.url); msg != "" {
			return nil, usagef("--target %s", msg)
		}
		if t.Builtin != nil {
			// The reference server's regime means nothing to a real server; its TTL stays the
			// declared one unless --session-ttl says otherwise.
			t = workloads.Target{SessionTTL: t.SessionTTL}
		}
		t.URL, t.Where = tf.url, "--target"
	}
	if t.URL == "" {
		return nil, usagef("--session-ttl, --header, --ca-file, --insecure-skip-verify and --http2 apply to a target given by URL; add --target URL")
	}
	if tf.set("session-ttl") {
		if tf.sessionTTL <= 0 {
			return nil, usagef("--session-ttl %s: must be greater than 0, e.g. 30m", tf.sessionTTL)
		}
		t.SessionTTL = tf.sessionTTL
	}
	for _, h := range tf.headers {
		hd, err := workloads.ParseHeader(h)
		if err != nil {
			return nil, usagef("--header: %v", err)
		}
		t.Headers = append(t.Headers, hd)
	}
	if tf.set("ca-file") {
		t.CAFile = tf.caFile
	}
	if tf.set("insecure-skip-verify") {
		t.InsecureSkipVerify = tf.insecure
	}
	if tf.set("http2") {
		t.HTTP2 = tf.http2
	}
	if t.CAFile != "" && t.InsecureSkipVerify {
		return nil, usagef("--insecure-skip-verify and a CA file exclude each other; keep one")
	}
	out, err := w.WithTarget(t)
	if err != nil {
		var hint string
		if !tf.set("session-ttl") {
			hint = " (with --session-ttl)"
		}
		return nil, &usageError{fmt.Errorf("--target: %w%s", err, hint)}
	}
	return out, nil
}

// args are the flags as given, for passing on to shard processes (procs.go); header values
// pass unexpanded, and each process expands them from the environment it shares.
func (tf *targetFlags) args() []string {
	if tf.set == nil {
		return nil
	}
	var a []string
	if tf.set("target") {
		a = append(a, "--target", tf.url)
	}
	if tf.set("session-ttl") {
		a = append(a, "--session-ttl", tf.sessionTTL.String())
	}
	for _, h := range tf.headers {
		a = append(a, "--header", h)
	}
	if tf.set("ca-file") {
		a = append(a, "--ca-file", tf.caFile)
	}
	if tf.set("insecure-skip-verify") {
		a = append(a, fmt.Sprintf("--insecure-skip-verify=%t", tf.insecure))
	}
	if tf.set("http2") {
		a = append(a, fmt.Sprintf("--http2=%t", tf.http2))
	}
	if tf.set("toxiproxy") {
		a = append(a, "--toxiproxy", tf.toxiproxy)
	}
	return a
}
