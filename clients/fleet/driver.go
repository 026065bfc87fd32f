package fleet

import (
	"context"
	"sync"

	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/internal/guard"
)

// driver is how one kind of client holds its sessions and makes the application's calls. There
// is one per kind, each in files of its own: the wire session (driver_wire.go,
// driver_wire_stream.go), the official Go SDK's client (driver_gosdk.go), and the stateless
// revision (driver_stateless.go). The fleet picks one when it is made (pickDriver); nothing
// else switches on the kind.
type driver interface {
	// hold initializes a session and holds it until it is abandoned, then starts over, until
	// ctx ends. It runs on a goroutine counted by wg and may hand on to others it counts there.
	hold(ctx context.Context, c *Client, wg *sync.WaitGroup)
	// tick is one application request of request loop k: a tool call, with whatever retries
	// the kind makes.
	tick(ctx context.Context, c *Client, k int)
	// notObservable lists the metrics this kind's numbers cannot speak for.
	notObservable() []string
}

// pickDriver chooses the driver for a group: the stateless revision whatever the group asked
// (there are no sessions to hold), the Go SDK's client for a group without a policy of ours
// (ClientGoSDK), the wire session otherwise.
func pickDriver(ep *wire.Endpoint, cfg GroupConfig) driver {
	switch {
	case ep.Generation == wire.Stateless:
		return &statelessDriver{}
	case policy.IsLibrary(cfg.Kind):
		return libraryDriver(cfg.Kind)
	case cfg.Policy == nil:
		return sdkDriver{}
	}
	return wireDriver{}
}

// run is a client's life: its driver holds sessions until ctx ends. wg counts the client's
// goroutines.
func (c *Client) run(ctx context.Context, wg *sync.WaitGroup) {
	defer wg.Done()
	defer guard.Catch(ctx, "client "+c.f.cfg.Name)
	c.f.drv.hold(ctx, c, wg)
}

// restart starts a new session in a new goroutine, unless the run is over.
func (c *Client) restart(ctx context.Context, wg *sync.WaitGroup) {
	if ctx.Err() == nil {
		wg.Add(1)
		go c.run(ctx, wg)
	}
}
