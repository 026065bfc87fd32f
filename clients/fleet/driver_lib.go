package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/policy"
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

// libDriver runs a group's clients on a client library (the Go SDK's, mcp-go's, the
// TypeScript SDKs'; open connects one session of it). This is the one application loop
// around every library: it connects, calls tools on the schedule, and connects anew when the
// library says its session is gone or has ended; it never retries a call. Every HTTP request
// the library sends goes through sdkObserver (the outside view); every call's outcome is
// judged by libCall (the inside view).
type libDriver struct{ open libOpener }

func (libDriver) notObservable() []string { return slices.Clone(sdkNotObservable) }

// hold connects a session, holds it until the application (tick) or the library gives up on
// it, and connects anew, until ctx ends.
func (d libDriver) hold(ctx context.Context, c *Client, _ *sync.WaitGroup) {
	c.mu.Lock()
	if c.sdk == nil {
		c.sdk = &sdkClient{ctx: ctx, byID: make(map[string]*held)}
	}
	c.mu.Unlock()
	connect := func(ctx context.Context) (libConn, error) {
		cctx, cancel := context.WithTimeout(ctx, c.f.ep.RequestTimeout)
		defer cancel()
		return d.open(cctx, c)
	}
	connectLoop(ctx, c, connect, func(conn libConn) bool {
		h := c.adoptLib(conn)
		select {
		case <-h.ctx.Done(): // the application gave up on it, or the run ended
		case <-conn.ended():
			// The library ended the session by itself (its stream could not be resumed, or
			// the server said the session is gone): the application connects anew.
			h.lib.surfaced.Store(true)
			c.judgeLibraryEnded(h)
			c.abandon(h, c.deadNow(h), true)
		}
		now := time.Now()
		if ctx.Err() != nil {
			// Settle and end it politely; finish must not DELETE it a second time.
			c.mu.Lock()
			if c.cur == h {
				c.cur = nil
			}
			c.mu.Unlock()
			c.settle(h, now)
		}
		c.judgeListener(h, now)
		conn.close()
		return false
	})
}

// sdkPrepare registers the session the server named in its answer to a library's initialize,
// before the library's connect returns: the Go SDK opens its first GET stream inside Connect,
// and that stream belongs to the session as much as any later request. Old sessions are
// marked replaced.
func (c *Client) sdkPrepare(id string) *held {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.sdk.byID[id]; h != nil {
		return h
	}
	h := &held{s: c.f.ep.Adopt(id)}
	h.ctx, h.cancel = context.WithCancel(c.sdk.ctx)
	if c.cur != nil {
		c.cur.replaced.Store(true)
	}
	for _, old := range c.sdk.byID {
		old.replaced.Store(true)
	}
	if len(c.sdk.byID) >= 4 { // old sessions' stragglers are rare after a few re-connects
		clear(c.sdk.byID)
	}
	c.sdk.byID[id] = h
	return h
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

// tick is one application request: a tool call through the library, no retries of our own
// (the library's behaviour is what is shown).
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
		c.f.notMade(ctx, c) // reconnecting or re-initializing: the turn passes without a call
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
	// The call runs under the session's context: an application that gives a session up
	// (another call's 404, the library's end) cancels the calls still in flight on it. When
	// the library's own error comes first, libCall judges it.
	c.libCall(ctx, h, conn.call(h.ctx, c.f.tool(), args, progress))
}

// libraryDriver is the driver of a library kind.
func libraryDriver(kind string) driver {
	switch kind {
	case policy.ClientMCPGo:
		return libDriver{open: openMCPGo}
	case policy.ClientTSSDK, policy.ClientTSClient, policy.ClientMCPGo16:
		return libDriver{open: openTS} // mcp-go v1.6.0's worker speaks the node workers' protocol
	}
	return libDriver{open: openGoSDK}
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
