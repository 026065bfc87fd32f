package faults

import (
	"context"
	"fmt"
	"net"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// chains is an embedded proxy without Toxiproxy's listener: its toxic chains alone, which a
// relay of ours (shield_chains.go) starts for each connection it accepts and dials on its
// own. Toxiproxy's proxy listens with net.Listen and dials its upstream with net.Dial itself,
// so a relay in front of it and another behind it cost two more socket pairs per connection;
// its ToxicCollection.StartLink takes any reader and writer, so the relay hands it the two
// connections' ends in process instead.
type chains struct {
	srv *toxiproxy.ApiServer
	ep  *embeddedProxy
}

// chainedReset is Toxiproxy's reset_peer under a name of our own. Toxiproxy's link asserts
// that a connection's ends are *net.TCPConn when a reset_peer is in its chain, to set their
// linger to 0 (a panic on any other reader or writer); the chains' ends are the relay's, so
// the relay sets the linger on its sockets itself (chains.start) and gives Toxiproxy this
// type, which behaves as reset_peer and is not asserted on.
type chainedReset struct{ toxics.ResetToxic }

const chainedResetType = "mcpchaos_reset_peer"

func init() { toxics.Register(chainedResetType, new(chainedReset)) }

// chains adds proxy name as Toxiproxy's chains alone (see chains); its toxics are managed as
// any embedded proxy's.
func (e *Embedded) chains(ctx context.Context, name, upstream string) (*chains, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, _, err := net.SplitHostPort(upstream); err != nil {
		return nil, fmt.Errorf("faults: proxy %s: upstream %q: want host:port: %w", name, upstream, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if _, ok := e.proxies[name]; ok {
		return nil, fmt.Errorf("faults: proxy %s: %w", name, toxiproxy.ErrProxyAlreadyExists)
	}
	// Its listen address stays unset: Toxiproxy reads it unguarded for each link's metric labels,
	// and the relay's listener is the proxy's address.
	p := toxiproxy.NewProxy(e.srv, name, "", upstream)
	if err := e.srv.Collection.Add(p, false); err != nil { // listed, never started
		return nil, fmt.Errorf("faults: proxy %s: %w", name, err)
	}
	ep := &embeddedProxy{p: p, toxics: make(map[string]string), chained: true}
	e.proxies[name] = ep
	return &chains{srv: e.srv, ep: ep}, nil
}

// addReset adds a reset_peer fault to a chained proxy, as chainedReset (see there).
func (ep *embeddedProxy) addReset(t Toxic, stream, proxy string) error {
	ep.resetMu.Lock() // held across the addition: see chains.start
	defer ep.resetMu.Unlock()
	if err := ep.add(t, chainedResetType, stream, proxy); err != nil {
		return err
	}
	ep.resets++
	return nil
}

// start runs Toxiproxy's two chains for one connection: client's bytes to server, server's to
// client. Toxiproxy resets (linger 0) both ends of a connection that starts while a reset_peer
// is in force, so that its close is a reset; the read lock keeps a reset_peer's addition or
// removal from falling between that check and the chains' start, as Toxiproxy's check and
// start are one step under its own lock.
// Toxiproxy keys a proxy's links by name: id is the connection's, unique in the proxy.
func (c *chains) start(id uint64, client, server *side) {
	c.ep.resetMu.RLock()
	defer c.ep.resetMu.RUnlock()
	if c.ep.resets > 0 {
		client.conn.SetLinger(0)
		server.conn.SetLinger(0)
	}
	name := fmt.Sprintf("%d", id)
	c.ep.p.Toxics.StartLink(c.srv, name+"upstream", client, server, stream.Upstream)
	c.ep.p.Toxics.StartLink(c.srv, name+"downstream", server, client, stream.Downstream)
}
