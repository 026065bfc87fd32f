package libdriver

// The mcp-go driver runs the library as teams ship it against session-family servers: its
// standalone GET listener (WithContinuousListening) is deprecated only from 2026-07-28, and
// WithLogger still carries the transport's own INFO lines that WithHTTPLogger does not.
//lint:file-ignore SA1019 the session family's GET listener and the transport's logger are what this driver measures and silences

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"
)

// mcpgoConn is one session of github.com/mark3labs/mcp-go's client (v1.2.1, pinned by go.mod),
// one per simulated client, in process. Its HTTP goes through sdkObserver and the group's
// proxy. It is pinned to the group's protocol (the session family): left alone it tries the
// stateless 2026-07-28 revision first, and no session, so no trap, would be tested.
//
// What it does on its own (read in its code, measured by the tests): a broken POST stream
// fails the call at once, it never resumes one with Last-Event-ID; a 404 clears the session id
// and fails with ErrSessionTerminated; with ContinuousListening it reopens its GET listener
// every second, never with Last-Event-ID, and stops it on a 404.
type mcpgoConn struct {
	cl      *mgclient.Client
	id      string
	proto   string
	timeout time.Duration
	done    chan struct{}
	once    sync.Once
}

// mcpgoVersion is the mcp-go module version in go.mod, recorded in the export.
const mcpgoVersion = "v1.2.1"

func openMCPGo(ctx context.Context, c *client) (libConn, error) {
	c.d.noteLibrary("github.com/mark3labs/mcp-go", mcpgoVersion)
	ep := c.e.EP
	hc := &http.Client{Transport: &sdkObserver{base: ep.HTTP.Transport, c: c}, CheckRedirect: ep.HTTP.CheckRedirect}
	// Its logger writes INFO lines to stderr by default, over the progress view: silenced.
	quiet := slog.New(slog.DiscardHandler)
	opts := []mgtransport.StreamableHTTPCOption{mgtransport.WithHTTPBasicClient(hc), mgtransport.WithLogger(quiet), mgtransport.WithHTTPLogger(quiet)}
	if optTrue(c.e.LibraryOptions, "ContinuousListening") {
		opts = append(opts, mgtransport.WithContinuousListening())
	}
	tr, err := mgtransport.NewStreamableHTTP(ep.URL, opts...)
	if err != nil {
		return nil, err
	}
	cl := mgclient.NewClient(tr, mgclient.WithProtocolVersion(ep.Protocol))
	conn := &mcpgoConn{cl: cl, timeout: ep.RequestTimeout, done: make(chan struct{})}
	cl.OnConnectionLost(func(error) { conn.once.Do(func() { close(conn.done) }) })
	// The transport's context lives as long as the run: its GET listener runs under it.
	if err := cl.Start(c.ctx); err != nil {
		return nil, err
	}
	req := mgmcp.InitializeRequest{}
	req.Params.ProtocolVersion = ep.Protocol
	req.Params.ClientInfo = mgmcp.Implementation{Name: ep.ClientName, Version: "1"}
	res, err := cl.Initialize(ctx, req)
	if err != nil {
		_ = cl.Close()
		return nil, err
	}
	conn.id, conn.proto = cl.GetSessionId(), res.ProtocolVersion
	return conn, nil
}

func (m *mcpgoConn) sessionID() string      { return m.id }
func (m *mcpgoConn) protocol() string       { return m.proto }
func (m *mcpgoConn) ended() <-chan struct{} { return m.done }
func (m *mcpgoConn) close()                 { _ = m.cl.Close() }

func (m *mcpgoConn) list(ctx context.Context) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	res, err := m.cl.ListTools(ctx, mgmcp.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func (m *mcpgoConn) call(ctx context.Context, tool string, args any, progress string) libOutcome {
	req := mgmcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	if progress != "" {
		req.Params.Meta = &mgmcp.Meta{ProgressToken: progress}
	}
	cctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	o := libOutcome{sent: time.Now(), timeout: m.timeout}
	res, err := m.cl.CallTool(cctx, req)
	o.took = time.Since(o.sent)
	if err == nil {
		o.isError = res.IsError
		return o
	}
	o.err = err
	var te *mgtransport.Error
	o.gone = errors.Is(err, mgtransport.ErrSessionTerminated)
	o.misclassified = !o.gone
	o.timedOut = errors.Is(err, context.DeadlineExceeded) && cctx.Err() != nil && ctx.Err() == nil
	o.answered = !errors.As(err, &te) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
	o.class = mcpgoClass(err, o)
	return o
}

// mcpgoClass names an mcp-go error for the export.
func mcpgoClass(err error, o libOutcome) string {
	switch {
	case o.gone:
		return "ErrSessionTerminated"
	case o.timedOut:
		return "context.DeadlineExceeded"
	case errors.Is(err, context.Canceled):
		return "context.Canceled"
	case o.answered:
		return "JSON-RPC error"
	}
	return "transport.Error"
}
