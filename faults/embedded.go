package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// ErrClosed is returned by an Embedded injector's methods after Close.
var ErrClosed = errors.New("faults: injector closed")

// Embedded is an Injector running Toxiproxy inside this process. It is safe
// for concurrent use.
type Embedded struct {
	mu      sync.Mutex
	srv     *toxiproxy.ApiServer
	proxies map[string]*embeddedProxy
	closed  bool

	closing  sync.Once // Close waits once; a wedged close is not waited for again
	closeErr error
}

type embeddedProxy struct {
	p      *toxiproxy.Proxy
	listen string            // the concrete address, kept across "down"
	down   string            // name of the "down" fault in force, "" when up
	toxics map[string]string // the faults in force, "down" included: name → type

	// chained: Toxiproxy's chains alone, fed by a relay of ours (see chains); resets counts
	// its reset_peer faults, guarded by resetMu, which a connection's start reads
	chained bool
	resetMu sync.RWMutex
	resets  int
}

// NewEmbedded returns an injector with no proxies. Its Toxiproxy server logs nowhere, and it
// leaves zerolog's global logger to the host program: Toxiproxy's bandwidth toxic (and its
// link) write through that global logger and cannot be given another, but only at Trace level,
// which zerolog's default global level (Debug) drops, and one Warn when a toxic could not hand
// on its last data within 5 s of being removed. A program that wants even that line gone
// quiets the global logger itself, as the mcpchaos command does.
func NewEmbedded() (*Embedded, error) {
	return &Embedded{
		srv:     toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		proxies: make(map[string]*embeddedProxy),
	}, nil
}

// AddProxy implements Injector. The proxy listens on 127.0.0.1 on a port the
// system picks.
func (e *Embedded) AddProxy(ctx context.Context, name, upstream string) (string, error) {
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
		return "", fmt.Errorf("faults: proxy %s: %w", name, toxiproxy.ErrProxyAlreadyExists)
	}
	p := toxiproxy.NewProxy(e.srv, name, "127.0.0.1:0", upstream)
	if err := e.srv.Collection.Add(p, true); err != nil {
		return "", fmt.Errorf("faults: proxy %s: start: %w", name, err)
	}
	// Start has returned, so the listener is bound and p.Listen is concrete.
	ep := &embeddedProxy{p: p, listen: p.Listen, toxics: make(map[string]string)}
	e.proxies[name] = ep
	return ep.listen, nil
}

// toxicJSON is the only form in which Toxiproxy accepts a toxic.
type toxicJSON struct {
	Name       string           `json:"name"`
	Type       string           `json:"type"`
	Stream     string           `json:"stream"`
	Toxicity   float32          `json:"toxicity"`
	Attributes map[string]int64 `json:"attributes"`
}

// AddToxic implements Injector. The toxic's type and attributes are checked
// with ValidateToxic first.
func (e *Embedded) AddToxic(ctx context.Context, proxy string, t Toxic) error {
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
	if ep.toxics[t.Name] != "" {
		return fmt.Errorf("faults: proxy %s: fault %s: %w", proxy, t.Name, toxiproxy.ErrToxicAlreadyExists)
	}
	if t.Type == TypeDown {
		if ep.down != "" {
			return fmt.Errorf("faults: proxy %s: fault %s: proxy already down by fault %s", proxy, t.Name, ep.down)
		}
		ep.p.Stop() // closes the listener and every open connection
		ep.down = t.Name
		ep.toxics[t.Name] = t.Type
		return nil
	}
	if ep.chained && t.Type == "reset_peer" {
		return ep.addReset(t, stream, proxy)
	}
	return ep.add(t, t.Type, stream, proxy)
}

// add gives Toxiproxy t as a toxic of type typ.
func (ep *embeddedProxy) add(t Toxic, typ, stream, proxy string) error {
	// Validated by check, so every value is an integral number; send it as an integer, which
	// is what Toxiproxy's attribute fields decode.
	attrs := make(map[string]int64, len(t.Attributes))
	for k, v := range t.Attributes {
		attrs[k], _ = integral(v)
	}
	body, err := json.Marshal(toxicJSON{Name: t.Name, Type: typ, Stream: stream, Toxicity: 1.0, Attributes: attrs})
	if err != nil {
		return fmt.Errorf("faults: proxy %s: fault %s: %w", proxy, t.Name, err)
	}
	if _, err := ep.p.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
		return fmt.Errorf("faults: proxy %s: fault %s: %w", proxy, t.Name, err)
	}
	ep.toxics[t.Name] = t.Type
	return nil
}

// RemoveToxic implements Injector. Removing a "down" fault restarts the proxy
// on the address it had; that fails only if something else took the port in
// the meantime.
func (e *Embedded) RemoveToxic(ctx context.Context, proxy, name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	ep, err := e.proxy(proxy)
	if err != nil {
		return err
	}
	typ := ep.toxics[name]
	if typ == "" {
		return fmt.Errorf("faults: proxy %s: fault %s: %w", proxy, name, toxiproxy.ErrToxicNotFound)
	}
	if name == ep.down {
		ep.p.Lock()
		ep.p.Listen = ep.listen
		ep.p.Unlock()
		if err := ep.p.Start(); err != nil {
			return fmt.Errorf("faults: proxy %s: end fault %s: listen again on %s: %w", proxy, name, ep.listen, err)
		}
		ep.down = ""
		delete(ep.toxics, name)
		return nil
	}
	if ep.chained && typ == "reset_peer" {
		ep.resetMu.Lock() // held across the removal: see chains.start
		defer ep.resetMu.Unlock()
	}
	if err := ep.p.Toxics.RemoveToxic(ctx, name); err != nil {
		return fmt.Errorf("faults: proxy %s: fault %s: %w", proxy, name, err)
	}
	if ep.chained && typ == "reset_peer" {
		ep.resets--
	}
	delete(ep.toxics, name)
	return nil
}

// Close implements Injector: it stops every proxy, which closes their
// listeners and connections and discards their toxics. It waits at most
// CallBound: a call the schedule abandoned may hold the proxies forever, and
// the process is about to end anyway.
func (e *Embedded) Close() error {
	e.closing.Do(func() {
		if err := within(CallBound, e.close); err != nil {
			e.closeErr = fmt.Errorf("faults: stopping the embedded Toxiproxy: %w", err)
		}
	})
	return e.closeErr
}

func (e *Embedded) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.proxies = nil
	return e.srv.Collection.Clear()
}

// proxy returns the named proxy; e.mu must be held.
func (e *Embedded) proxy(name string) (*embeddedProxy, error) {
	if e.closed {
		return nil, ErrClosed
	}
	ep, ok := e.proxies[name]
	if !ok {
		return nil, fmt.Errorf("faults: proxy %s: %w", name, toxiproxy.ErrProxyNotFound)
	}
	return ep, nil
}
