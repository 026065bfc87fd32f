package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// libConn is one session of a client library, as the application holds it.
type libConn interface {
	sessionID() string
	protocol() string
	// ended is closed when the library tells the application that the session or its
	// connection is over (a closed client, a connection-lost callback, onclose).
	ended() <-chan struct{}
	// call makes one tool call and says what the application got back.
	call(ctx context.Context, tool string, args any, progress string) libOutcome
	// list is tools/list through the library (the tool's inputSchema, for arguments).
	list(ctx context.Context) (json.RawMessage, error)
	// close ends the session as the library ends it (a DELETE, unless it knows better).
	close()
}

// libOpener connects a new session of client c's library, within ctx.
type libOpener func(ctx context.Context, c *Client) (libConn, error)

// libDriver runs a group's clients on a client library other than the Go SDK's (whose driver,
// driver_gosdk.go, came first and keeps its own loop): the application around the library
// connects, calls tools on the schedule, and connects anew when the library says its session
// is gone or has ended; it never retries a call. Every HTTP request the library sends goes
// through sdkObserver (the outside view); every call's outcome is judged by libCall (the
// inside view).
type libDriver struct{ open libOpener }

func (libDriver) notObservable() []string { return slices.Clone(sdkNotObservable) }

func (d libDriver) hold(ctx context.Context, c *Client, _ *sync.WaitGroup) {
	c.mu.Lock()
	if c.sdk == nil {
		c.sdk = &sdkClient{ctx: ctx, byID: make(map[string]*held)}
	}
	c.mu.Unlock()
	backoff := newBackoff(c.f.cfg.ReconnectDelay, c.f.cfg.ReconnectMax)
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, c.f.ep.RequestTimeout)
		conn, err := d.open(cctx, c)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				c.f.failed(err)
			}
			sleep.For(ctx, backoff.next())
			continue
		}
		backoff.reset()
		h := c.adoptLib(conn)
		select {
		case <-h.ctx.Done(): // the application gave up on it, or the run ended
		case <-conn.ended():
			h.lib.surfaced.Store(true)
			c.abandon(h, c.deadNow(h), true)
		}
		now := time.Now()
		if ctx.Err() != nil {
			c.mu.Lock()
			if c.cur == h {
				c.cur = nil
			}
			c.mu.Unlock()
			c.settle(h, now)
		}
		c.judgeListener(h, now)
		conn.close()
	}
}

// adoptLib makes a connected library session the client's current one.
func (c *Client) adoptLib(conn libConn) *held {
	h := c.sdkPrepare(conn.sessionID())
	h.s.Protocol = conn.protocol()
	c.f.rec.Inc(metrics.SessionsStarted)
	c.f.served(h.s)
	c.f.noteProtocol(h.s.Protocol)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = h
	c.sdk.conn = conn
	c.setStateLocked(metrics.StateLive)
	return h
}

func (libDriver) tick(ctx context.Context, c *Client, _ int) {
	c.mu.Lock()
	h := c.cur
	var conn libConn
	if c.sdk != nil {
		conn = c.sdk.conn
	}
	live := c.state == metrics.StateLive
	c.mu.Unlock()
	if h == nil || conn == nil || !live {
		return
	}
	args, err := c.f.arguments(ctx, c, func(ctx context.Context) (json.RawMessage, error) {
		raw, err := conn.list(ctx)
		if err != nil {
			c.f.failed(err)
		}
		return raw, err
	})
	if err != nil {
		if ctx.Err() == nil {
			c.f.argsFailed(err)
		}
		return
	}
	progress := ""
	if seq := c.calls.Add(1); !c.f.cfg.NoProgressTokens {
		progress = fmt.Sprintf("mcpchaos-%s-%d-%d", c.f.cfg.Name, c.idx, seq)
	}
	c.libCall(ctx, h, conn.call(h.ctx, c.f.tool(), args, progress))
}

// libraryDriver is the driver of a library kind.
func libraryDriver(kind string) driver {
	switch kind {
	case policy.ClientMCPGo:
		return libDriver{open: openMCPGo}
	case policy.ClientTSSDK, policy.ClientTSClient:
		return libDriver{open: openTS}
	}
	return sdkDriver{}
}

// optInt reads an integer option, or def.
func optInt(opts map[string]any, name string, def int) int {
	if n, ok := policy.Number(opts[name]); ok {
		return int(n)
	}
	return def
}

// optBool reads a boolean option, or false.
func optTrue(opts map[string]any, name string) bool {
	b, _ := opts[name].(bool)
	return b
}
