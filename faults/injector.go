package faults

import (
	"context"
	"fmt"
)

// Directions a toxic can act on. Downstream is the default: it is where SSE
// events flow, and where a load balancer's idle timeout bites.
const (
	Downstream = "downstream" // server → client
	Upstream   = "upstream"   // client → server
)

// Toxic is one fault as applied to one proxy.
//
// Toxiproxy semantics worth knowing when writing a schedule:
//   - Toxics added while connections are open reach those connections too,
//     except reset_peer: it sends an RST only on connections opened after it
//     was added (Toxiproxy sets SO_LINGER 0 when a connection starts); older
//     connections get an ordinary close (FIN) instead. While a reset_peer is
//     present, every new connection is set up that way, so any later close of
//     such a connection (by idle_timeout, say) is a reset too, even after the
//     reset_peer is removed.
//   - Removing a timeout toxic closes the connections it was stalling.
//   - Toxics keep per-connection state (idle_timeout's idle clock, the bytes
//     limit_data has let through) across changes to the toxic list.
type Toxic struct {
	Name       string         // unique per proxy
	Type       string         // one of Types
	Stream     string         // Downstream (default when empty) or Upstream; "down" acts on both
	Attributes map[string]any // as accepted by ValidateToxic
}

// Injector puts faults on proxies that stand between clients and a server.
// Implementations listen on loopback only and apply every toxic with a
// toxicity of 1.0 (see the package comment).
type Injector interface {
	// AddProxy starts a proxy to upstream (host:port) and returns the
	// address it listens on, "127.0.0.1:PORT".
	AddProxy(ctx context.Context, name, upstream string) (listen string, err error)
	// AddToxic applies t to the named proxy. Type "down" disables the proxy
	// instead: its listener closes and its open connections are cut.
	AddToxic(ctx context.Context, proxy string, t Toxic) error
	// RemoveToxic takes the named toxic off the proxy. For a "down" fault it
	// re-enables the proxy on the same listen address. Removal is cleanup, so
	// implementations attempt it even when ctx is already done.
	RemoveToxic(ctx context.Context, proxy, name string) error
	// Close removes every proxy and toxic the injector created. It is
	// idempotent and safe to call on every exit path.
	Close() error
}

// direction returns t's stream, defaulted and checked.
func (t Toxic) direction() (string, error) {
	switch t.Stream {
	case "", Downstream:
		return Downstream, nil
	case Upstream:
		return Upstream, nil
	}
	return "", fmt.Errorf("fault %s: stream %q: must be %q or %q", t.Name, t.Stream, Downstream, Upstream)
}

// check is what every Injector verifies before applying t to a proxy: the run is still on, the
// fault has a name, its type and attributes are valid; it returns t's stream.
func (t Toxic) check(ctx context.Context, proxy string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if t.Name == "" {
		return "", fmt.Errorf("faults: proxy %s: %s fault without a name", proxy, t.Type)
	}
	if err := ValidateToxic(t.Type, t.Attributes); err != nil {
		return "", fmt.Errorf("faults: proxy %s: fault %s: %w", proxy, t.Name, err)
	}
	stream, err := t.direction()
	if err != nil {
		return "", fmt.Errorf("faults: proxy %s: %w", proxy, err)
	}
	return stream, nil
}
