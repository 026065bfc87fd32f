package fleet

import (
	"context"
	"sync"

	"github.com/mcpchaos/mcpchaos/clients/fleet/drive"
	"github.com/mcpchaos/mcpchaos/clients/fleet/libdriver"
	"github.com/mcpchaos/mcpchaos/clients/fleet/wiredriver"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/internal/guard"
)

// pickDriver chooses the driver for a group, the only switch on its kind: the stateless
// revision whatever the group asked (there are no sessions to hold), a client library's for a
// library kind or a group without a policy of ours (the Go SDK's), the wire session otherwise.
// A library kind's driver is f.lib, kept against a stateless server too for what it adds to
// the group (Prepare, Library, Close: library.go).
func (f *Fleet) pickDriver() drive.Driver {
	if policy.IsLibrary(f.cfg.Kind) || f.cfg.Policy == nil {
		hosts := make([]drive.Client, len(f.clients))
		for i, c := range f.clients {
			hosts[i] = c
		}
		f.lib = libdriver.New(f.env, hosts)
	}
	switch {
	case f.ep.Generation == wire.Stateless:
		return wiredriver.NewStateless(f.env)
	case f.lib != nil:
		return f.lib
	}
	return wiredriver.New(f.env)
}

// newEnv is what the group hands its driver (package drive): its settings, resolved.
func (f *Fleet) newEnv() *drive.Env {
	cfg := &f.cfg
	return &drive.Env{
		Settings: drive.Settings{
			Name:             cfg.Name,
			Kind:             cfg.Kind,
			Clients:          cfg.Clients,
			Tool:             cfg.Tool,
			OwnArguments:     cfg.Arguments != nil,
			NoProgressTokens: cfg.NoProgressTokens,
			LibraryOptions:   cfg.LibraryOptions,
			DeadStatuses:     cfg.DeadStatuses,
			RetryBackoff:     cfg.RetryBackoff,
			ReconnectDelay:   cfg.ReconnectDelay,
			ReconnectMax:     cfg.ReconnectMax,
		},
		EP: f.ep, Rec: f.rec, Truth: f.truth, Policy: f.policy, Books: (*books)(f),
	}
}

// run is a client's life: its driver holds sessions until ctx ends. wg counts the client's
// goroutines.
func (c *Client) run(ctx context.Context, wg *sync.WaitGroup) {
	defer wg.Done()
	defer guard.Catch(ctx, "client "+c.f.cfg.Name)
	c.f.drv.Hold(ctx, c, wg)
}

// Restart starts a new session in a new goroutine, unless the run is over.
func (c *Client) Restart(ctx context.Context, wg *sync.WaitGroup) {
	if ctx.Err() == nil {
		wg.Add(1)
		go c.run(ctx, wg)
	}
}

// books are the group's books of failures as its driver counts into them (drive.Books).
type books Fleet

func (b *books) Failed(err error) { (*Fleet)(b).failed(err) }
func (b *books) CallFailed(rep *wire.Reply, err error, dead bool) {
	(*Fleet)(b).callFailed(rep, err, dead)
}
func (b *books) Surfaced(rep *wire.Reply, err error, dead bool) { (*Fleet)(b).surfaced(rep, err, dead) }
func (b *books) ArgsFailed(err error)                           { (*Fleet)(b).argsFailed(err) }
func (b *books) RefusedCall()                                   { b.refusedCalls.Add(1) }
func (b *books) Sample(text string)                             { (*Fleet)(b).sample(text) }
func (b *books) ProtocolError(err error)                        { (*Fleet)(b).protocolError(err) }
func (b *books) Refusal(status int)                             { (*Fleet)(b).refusal(status) }
func (b *books) Tool() string                                   { return (*Fleet)(b).tool() }
