package libdriver

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet/drive"
	"github.com/mcpchaos/mcpchaos/clients/policy"
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

// opener connects a new session of client c's library, within ctx.
type opener func(ctx context.Context, c *client) (libConn, error)

// Driver runs a group's clients on a client library (the Go SDK's, mcp-go's, the
// TypeScript SDKs'; open connects one session of it). This is the one application loop
// around every library: it connects, calls tools on the schedule, and connects anew when the
// library says its session is gone or has ended; it never retries a call. Every HTTP request
// the library sends goes through sdkObserver (the outside view); every call's outcome is
// judged by libCall (the inside view).
type Driver struct {
	e       *drive.Env
	open    opener
	clients []*client // by index
	lib     libReport // the library and its error classes (library.go)
}

// client is a library client's state beside its books (the group's drive.Client).
type client struct {
	drive.Client
	e      *drive.Env
	d      *Driver
	mu     sync.Mutex
	ctx    context.Context     // the run's: sessions are held under it (set by Hold)
	byID   map[string]*libHeld // this client's sessions, by id: a request names one
	dropAt time.Time           // when the current session's GET stream last ended
	conn   libConn             // the library session the application holds now
	cur    *libHeld            // the session conn opened (adoptLib)
}

// libHeld is one session of a library client: the session as every kind holds it, and what
// the library was seen doing with it.
type libHeld struct {
	*drive.Held
	lib libWatch // judge.go
}

// New is the driver of the library kind e.Kind (the Go SDK's for any other kind), for the
// group's clients (hosts, by index).
func New(e *drive.Env, hosts []drive.Client) *Driver {
	d := &Driver{e: e, open: openGoSDK, clients: make([]*client, len(hosts))}
	switch e.Kind {
	case policy.ClientMCPGo:
		d.open = openMCPGo
	case policy.ClientTSSDK, policy.ClientTSClient, policy.ClientMCPGo16:
		d.open = openTS // mcp-go v1.6.0's worker speaks the node workers' protocol
	}
	for i, h := range hosts {
		d.clients[i] = &client{Client: h, e: e, d: d, byID: make(map[string]*libHeld)}
	}
	return d
}

// NotObservable: what a library does inside (sdkNotObservable).
func (*Driver) NotObservable() []string { return slices.Clone(sdkNotObservable) }

// Hold connects a session, holds it until the application (Tick) or the library gives up on
// it, and connects anew, until ctx ends.
func (d *Driver) Hold(ctx context.Context, dc drive.Client, _ *sync.WaitGroup) {
	c := d.clients[dc.Index()]
	c.mu.Lock()
	if c.ctx == nil {
		c.ctx = ctx
	}
	c.mu.Unlock()
	connect := func(ctx context.Context) (libConn, error) {
		cctx, cancel := context.WithTimeout(ctx, c.e.EP.RequestTimeout)
		defer cancel()
		return d.open(cctx, c)
	}
	drive.ConnectLoop(ctx, c.e, connect, func(conn libConn) bool {
		h := c.adoptLib(conn)
		select {
		case <-h.Ctx.Done(): // the application gave up on it, or the run ended
		case <-conn.ended():
			// The library ended the session by itself (its stream could not be resumed, or
			// the server said the session is gone): the application connects anew.
			h.lib.surfaced.Store(true)
			c.JudgeLibraryEnded(h.Held, h.lib.deadStatus.Load())
			c.Abandon(h.Held, c.DeadNow(h.Held), true)
		}
		now := time.Now()
		if ctx.Err() != nil {
			// Settle and end it politely; finish must not DELETE it a second time.
			c.Forget(h.Held)
			c.Settle(h.Held, now)
		}
		c.judgeListener(h, now)
		conn.close()
		return false
	})
}

// prepare registers the session the server named in its answer to a library's initialize,
// before the library's connect returns: the Go SDK opens its first GET stream inside Connect,
// and that stream belongs to the session as much as any later request. Old sessions are
// marked replaced.
func (c *client) prepare(id string) *libHeld {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.byID[id]; h != nil {
		return h
	}
	h := &libHeld{Held: drive.NewHeld(c.ctx, c.e.EP.Adopt(id))}
	if cur, _ := c.Current(); cur != nil {
		cur.Replaced.Store(true)
	}
	for _, old := range c.byID {
		old.Replaced.Store(true)
	}
	if len(c.byID) >= 4 { // old sessions' stragglers are rare after a few re-connects
		clear(c.byID)
	}
	c.byID[id] = h
	return h
}

// adoptLib makes a connected library session the client's current one.
func (c *client) adoptLib(conn libConn) *libHeld {
	h := c.prepare(conn.sessionID())
	h.S.Protocol = conn.protocol()
	c.mu.Lock()
	c.conn, c.cur = conn, h
	c.mu.Unlock()
	c.Adopt(h.Held)
	return h
}

// current is the session the application holds now and its library connection, nil when
// the client is not live.
func (c *client) current() (*libHeld, libConn) {
	cur, live := c.Current()
	if cur == nil || !live {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil || c.cur.Held != cur || c.conn == nil {
		return nil, nil
	}
	return c.cur, c.conn
}

// Tick is one application request: a tool call through the library, no retries of our own
// (the library's behaviour is what is shown).
func (d *Driver) Tick(ctx context.Context, dc drive.Client, _ int) {
	c := d.clients[dc.Index()]
	h, conn := c.current()
	if h == nil {
		c.NotMade(ctx) // reconnecting or re-initializing: the turn passes without a call
		return
	}
	args, err := c.Arguments(ctx, func(ctx context.Context) (json.RawMessage, error) {
		raw, err := conn.list(ctx)
		if err != nil {
			c.e.Books.Failed(err)
		}
		return raw, err
	})
	if err != nil {
		if ctx.Err() == nil {
			c.e.Books.ArgsFailed(err)
		}
		return
	}
	progress := c.ProgressToken()
	// The call runs under the session's context: an application that gives a session up
	// (another call's 404, the library's end) cancels the calls still in flight on it. When
	// the library's own error comes first, libCall judges it.
	c.libCall(ctx, h, conn.call(h.Ctx, c.e.Books.Tool(), args, progress))
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
