package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// NamePrefix starts the name of every proxy mcpchaos creates on a toxiproxy-server, so that
// Clean can find what a crashed run left without touching anyone else's proxies.
const NamePrefix = "mcpchaos-"

// NewRunPrefix returns a name prefix unique to one run: "mcpchaos-<8 hex digits>-". Two runs
// sharing a toxiproxy-server never touch each other's proxies.
func NewRunPrefix() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return NamePrefix + hex.EncodeToString(b[:]) + "-"
}

// External is an Injector on a toxiproxy-server reached through its HTTP API. Each proxy it
// creates is named with its run's prefix and listens on ListenHost at a port the server picks;
// Close removes every proxy bearing the prefix, including any whose creation the run never
// heard back about. It is safe for concurrent use.
//
// Toxiproxy's own toxics are there; mcpchaos's idle_timeout is not (a stock toxiproxy-server
// does not know it): Check finds that out, with every other attribute the server would refuse,
// before a run starts.
type External struct {
	api        string
	prefix     string
	listenHost string
	c          *toxiproxy.Client

	mu      sync.Mutex
	proxies map[string]*externalProxy
	closed  bool

	closing  sync.Once // Close waits once; a wedged close is not waited for again
	closeErr error
}

type externalProxy struct {
	p      *toxiproxy.Proxy
	down   string          // name of the "down" fault in force
	toxics map[string]bool // names of the faults in force, "down" included
}

// NewExternal connects to the toxiproxy-server whose API is at api (http://host:port) and
// checks that it answers. Proxies are named prefix+name and listen on listenHost ("" means
// 127.0.0.1: the clients run on the machine the server runs on).
func NewExternal(api, prefix, listenHost string) (*External, error) {
	if !strings.HasPrefix(prefix, NamePrefix) {
		return nil, fmt.Errorf("faults: proxy name prefix %q must start with %q", prefix, NamePrefix)
	}
	if listenHost == "" {
		listenHost = "127.0.0.1"
	}
	c := toxiproxy.NewClient(api)
	c.UserAgent = "mcpchaos"
	if _, err := c.Version(); err != nil {
		return nil, fmt.Errorf("faults: toxiproxy-server at %s does not answer (%v); start it (toxiproxy-server, or the binary `server` from go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0) or fix --toxiproxy", api, err)
	}
	return &External{api: api, prefix: prefix, listenHost: listenHost, c: c, proxies: make(map[string]*externalProxy)}, nil
}

// Prefix is the run's proxy name prefix.
func (e *External) Prefix() string { return e.prefix }

// AddProxy implements Injector.
func (e *External) AddProxy(ctx context.Context, name, upstream string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if _, _, err := net.SplitHostPort(upstream); err != nil {
		return "", fmt.Errorf("faults: proxy %s: upstream %q: want host:port: %w", name, upstream, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return "", ErrClosed
	}
	if _, ok := e.proxies[name]; ok {
		return "", fmt.Errorf("faults: proxy %s: already exists", name)
	}
	p, err := e.c.CreateProxy(e.prefix+name, net.JoinHostPort(e.listenHost, "0"), upstream)
	if err != nil {
		return "", fmt.Errorf("faults: proxy %s on %s: %w", name, e.api, err)
	}
	e.proxies[name] = &externalProxy{p: p, toxics: make(map[string]bool)}
	return p.Listen, nil
}

// AddToxic implements Injector.
func (e *External) AddToxic(ctx context.Context, proxy string, t Toxic) error {
	stream, err := t.check(ctx, proxy)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ep, err := e.proxy(proxy)
	if err != nil {
		return err
	}
	if ep.toxics[t.Name] {
		return fmt.Errorf("faults: proxy %s: fault %s: already in force", proxy, t.Name)
	}
	if t.Type == TypeDown {
		if ep.down != "" {
			return fmt.Errorf("faults: proxy %s: fault %s: proxy already down by fault %s", proxy, t.Name, ep.down)
		}
		if err := ep.p.Disable(); err != nil {
			return fmt.Errorf("faults: proxy %s: fault %s: %w", proxy, t.Name, err)
		}
		ep.down = t.Name
		ep.toxics[t.Name] = true
		return nil
	}
	if _, err := ep.p.AddToxic(t.Name, t.Type, stream, 1.0, attributes(t.Attributes)); err != nil {
		return fmt.Errorf("faults: proxy %s: fault %s: %w", proxy, t.Name, explain(t.Type, err))
	}
	ep.toxics[t.Name] = true
	return nil
}

// RemoveToxic implements Injector. Ending a "down" fault re-enables the proxy, which listens
// again on the address it had.
func (e *External) RemoveToxic(_ context.Context, proxy, name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	ep, err := e.proxy(proxy)
	if err != nil {
		return err
	}
	if !ep.toxics[name] {
		return fmt.Errorf("faults: proxy %s: fault %s: not in force", proxy, name)
	}
	if name == ep.down {
		if err := ep.p.Enable(); err != nil {
			return fmt.Errorf("faults: proxy %s: end fault %s: %w", proxy, name, err)
		}
		ep.down = ""
	} else if err := ep.p.RemoveToxic(name); err != nil {
		return fmt.Errorf("faults: proxy %s: fault %s: %w", proxy, name, err)
	}
	delete(ep.toxics, name)
	return nil
}

// Close implements Injector: it deletes every proxy on the server whose name bears the run's
// prefix. It is idempotent. It waits at most twice CallBound (a server wedged by a call the
// schedule abandoned never answers) and then says how to remove what is left.
func (e *External) Close() error {
	e.closing.Do(func() {
		e.closeErr = within(2*CallBound, e.close)
		if errors.Is(e.closeErr, ErrAbandoned) {
			e.closeErr = fmt.Errorf("faults: removing the run's proxies from %s: %w; remove them with `mcpchaos clean --toxiproxy %s`", e.api, e.closeErr, e.api)
		}
	})
	return e.closeErr
}

func (e *External) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.proxies = nil
	_, err := clean(e.c, e.api, e.prefix)
	return err
}

// Check tries every toxic on a scratch proxy of the run (created and deleted here, listening
// on loopback, carrying no traffic), so that a toxic the server does not know or attributes it
// refuses are found before the run starts. Down faults need nothing from the server beyond
// what AddProxy does. The error names the first toxic refused.
func (e *External) Check(ctx context.Context, toxics []Toxic) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	var need []Toxic
	for _, t := range toxics {
		if t.Type == TypeHalfOpen {
			return fmt.Errorf("faults: fault %s: half_open needs the embedded fault proxy, which holds both sockets of a connection; a toxiproxy-server (%s) cannot leave one side open: run without --toxiproxy", t.Name, e.api)
		}
		if t.Type != TypeDown {
			need = append(need, t)
		}
	}
	if len(need) == 0 {
		return nil
	}
	p, err := e.c.CreateProxy(e.prefix+"check", "127.0.0.1:0", "127.0.0.1:9")
	if err != nil {
		return fmt.Errorf("faults: checking the faults on %s: %w", e.api, err)
	}
	defer func() {
		if derr := p.Delete(); derr != nil && err == nil {
			err = fmt.Errorf("faults: removing the scratch proxy %s: %w", p.Name, derr)
		}
	}()
	for i, t := range need {
		stream, err := t.direction()
		if err != nil {
			return err
		}
		if err := ValidateToxic(t.Type, t.Attributes); err != nil {
			return fmt.Errorf("fault %s: %w", t.Name, err)
		}
		name := fmt.Sprintf("check-%d", i)
		if _, err := p.AddToxic(name, t.Type, stream, 1.0, attributes(t.Attributes)); err != nil {
			return fmt.Errorf("fault %s: the toxiproxy-server at %s refuses it: %w", t.Name, e.api, explain(t.Type, err))
		}
		if err := p.RemoveToxic(name); err != nil {
			return fmt.Errorf("faults: checking fault %s: %w", t.Name, err)
		}
	}
	return nil
}

// proxy returns the named proxy; e.mu must be held.
func (e *External) proxy(name string) (*externalProxy, error) {
	if e.closed {
		return nil, ErrClosed
	}
	ep, ok := e.proxies[name]
	if !ok {
		return nil, fmt.Errorf("faults: proxy %s: no such proxy", name)
	}
	return ep, nil
}

// Clean deletes every proxy on the toxiproxy-server at api whose name starts with prefix
// (NamePrefix: whatever mcpchaos runs left there, typically after a crash or a kill -9), and
// returns their names, sorted.
func Clean(api, prefix string) ([]string, error) {
	if !strings.HasPrefix(prefix, NamePrefix) {
		return nil, fmt.Errorf("faults: prefix %q must start with %q: mcpchaos removes only its own proxies", prefix, NamePrefix)
	}
	c := toxiproxy.NewClient(api)
	c.UserAgent = "mcpchaos"
	return clean(c, api, prefix)
}

func clean(c *toxiproxy.Client, api, prefix string) ([]string, error) {
	all, err := c.Proxies()
	if err != nil {
		return nil, fmt.Errorf("faults: listing the proxies on %s: %w", api, err)
	}
	var removed []string
	var errs []error
	for name, p := range all {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		if err := p.Delete(); err != nil {
			errs = append(errs, fmt.Errorf("faults: removing proxy %s from %s: %w", name, api, err))
			continue
		}
		removed = append(removed, name)
	}
	sort.Strings(removed)
	return removed, errors.Join(errs...)
}

// attributes turns validated attribute values into the integers Toxiproxy's API decodes.
func attributes(in map[string]any) toxiproxy.Attributes {
	out := make(toxiproxy.Attributes, len(in))
	for k, v := range in {
		out[k], _ = integral(v)
	}
	return out
}

// explain adds what to do to the server's refusal of a toxic type it does not know.
func explain(typ string, err error) error {
	var ae *toxiproxy.ApiError
	if errors.As(err, &ae) && strings.Contains(strings.ToLower(ae.Message), "toxic type") {
		if typ == "idle_timeout" {
			return fmt.Errorf("%w: idle_timeout is mcpchaos's own toxic, which only the embedded Toxiproxy has; run without --toxiproxy, or give that fault to a build of toxiproxy-server that registers it", err)
		}
		return fmt.Errorf("%w: the server does not know toxic %q; check its version", err, typ)
	}
	return err
}

// Alive checks that the toxiproxy-server still answers and still has every proxy of the run
// (a server that restarted has lost them all). The run's health watcher calls it.
func (e *External) Alive() error {
	e.mu.Lock()
	var names []string
	for name := range e.proxies {
		names = append(names, name)
	}
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return ErrClosed
	}
	all, err := e.c.Proxies()
	if err != nil {
		return fmt.Errorf("toxiproxy-server at %s does not answer: %w", e.api, err)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, ok := all[e.prefix+name]; !ok {
			return fmt.Errorf("toxiproxy-server at %s no longer has proxy %s%s (it restarted, or someone removed it)", e.api, e.prefix, name)
		}
	}
	return nil
}
