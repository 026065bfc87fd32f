//go:build mcpgoworker

// The mcp-go v1.6.0 worker: a process that holds many clients of github.com/mark3labs/mcp-go
// v1.6.0 (pinned by worker.mod) for mcpchaos groups of kind mcpgo-v1.6. One Go module cannot
// require two versions of mcp-go, and mcpchaos requires v1.2.1 (in process, the mcpgo kind):
// this one is built apart, by `mcpchaos setup go-libraries` (clients/mcpgoworker), and speaks
// the TypeScript worker's JSON-lines protocol (clients/tsworker/worker.mjs), so that the
// fleet's worker pool and gateway drive both alike. The build constraint keeps it out of
// mcpchaos's own module; it is embedded there as source.
//
// Commands:  {op:"open", c, url, opts, name, timeout_ms, protocol} -> {ev:"opened", c, session, protocol} | {ev:"open_failed", c, error}
//
//	{op:"call", c, q, tool, args, progress}               -> {ev:"result", c, q, ok, ...}
//	{op:"list", c, q}                                     -> {ev:"listed", c, q, tools} | {ev:"result", ...}
//	{op:"close", c}                                       -> {ev:"closed", c}
//
// Events:    {ev:"ready", library, version, pid}, {ev:"ended", c} (the library lost the
//
//	connection by itself: OnConnectionLost).
//
// Every request a client sends carries X-Mcpchaos-Client: c, for mcpchaos's gateway.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"
)

// version is the mcp-go version worker.mod pins.
const version = "v1.6.0"

type msg struct {
	Op        string          `json:"op,omitempty"`
	Ev        string          `json:"ev,omitempty"`
	C         int             `json:"c"`
	Q         int64           `json:"q,omitempty"`
	URL       string          `json:"url,omitempty"`
	Name      string          `json:"name,omitempty"`
	Opts      map[string]any  `json:"opts,omitempty"`
	TimeoutMS int64           `json:"timeout_ms,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Args      any             `json:"args,omitempty"`
	Progress  string          `json:"progress,omitempty"`
	Session   string          `json:"session,omitempty"`
	Protocol  string          `json:"protocol,omitempty"`
	Error     string          `json:"error,omitempty"`
	Tools     json.RawMessage `json:"tools,omitempty"`
	Library   string          `json:"library,omitempty"`
	Version   string          `json:"version,omitempty"`
	PID       int             `json:"pid,omitempty"`

	OK            bool   `json:"ok,omitempty"`
	IsError       bool   `json:"is_error,omitempty"`
	Class         string `json:"class,omitempty"`
	Message       string `json:"message,omitempty"`
	Gone          bool   `json:"gone,omitempty"`
	Misclassified bool   `json:"misclassified,omitempty"`
	TimedOut      bool   `json:"timed_out,omitempty"`
	Answered      bool   `json:"answered,omitempty"`
}

var (
	outMu sync.Mutex
	out   = bufio.NewWriter(os.Stdout)
)

func emit(m msg) {
	b, _ := json.Marshal(m)
	outMu.Lock()
	defer outMu.Unlock()
	out.Write(append(b, '\n'))
	out.Flush()
}

type entry struct {
	cl      *mgclient.Client
	timeout time.Duration
	mu      sync.Mutex
	closing bool
}

var (
	mu      sync.Mutex
	clients = map[int]*entry{}
	running sync.WaitGroup
	// base is the run's context: the transports' GET listeners run under it.
	base, stopAll = context.WithCancel(context.Background())
)

// header adds the gateway's client header to every request.
type header struct {
	c    string
	base http.RoundTripper
}

func (h header) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Mcpchaos-Client", h.c)
	return h.base.RoundTrip(r)
}

func optMillis(opts map[string]any, name string) time.Duration {
	if n, ok := opts[name].(float64); ok && n > 0 {
		return time.Duration(n) * time.Millisecond
	}
	return 0
}

func open(m msg) {
	quiet := slog.New(slog.DiscardHandler)
	hc := &http.Client{Transport: header{c: strconv.Itoa(m.C), base: http.DefaultTransport}}
	opts := []mgtransport.StreamableHTTPCOption{mgtransport.WithHTTPBasicClient(hc), mgtransport.WithLogger(quiet), mgtransport.WithHTTPLogger(quiet)}
	if b, _ := m.Opts["ContinuousListening"].(bool); b {
		opts = append(opts, mgtransport.WithContinuousListening())
	}
	if d := optMillis(m.Opts, "ContinuousListeningBackoffInitial"); d > 0 {
		opts = append(opts, mgtransport.WithContinuousListeningBackoff(d, max(d, optMillis(m.Opts, "ContinuousListeningBackoffMax"))))
	}
	failed := func(err error) { emit(msg{Ev: "open_failed", C: m.C, Error: trim(err.Error())}) }
	tr, err := mgtransport.NewStreamableHTTP(m.URL, opts...)
	if err != nil {
		failed(err)
		return
	}
	cl := mgclient.NewClient(tr, mgclient.WithProtocolVersion(m.Protocol))
	e := &entry{cl: cl, timeout: time.Duration(m.TimeoutMS) * time.Millisecond}
	if e.timeout <= 0 {
		e.timeout = time.Minute
	}
	cl.OnConnectionLost(func(error) {
		e.mu.Lock()
		closing := e.closing
		e.closing = true
		e.mu.Unlock()
		if !closing {
			emit(msg{Ev: "ended", C: m.C})
		}
	})
	if err := cl.Start(base); err != nil {
		failed(err)
		return
	}
	req := mgmcp.InitializeRequest{}
	req.Params.ProtocolVersion = m.Protocol
	req.Params.ClientInfo = mgmcp.Implementation{Name: m.Name, Version: "1"}
	ctx, cancel := context.WithTimeout(base, e.timeout)
	defer cancel()
	res, err := cl.Initialize(ctx, req)
	if err != nil {
		e.closing = true
		_ = cl.Close()
		failed(err)
		return
	}
	mu.Lock()
	clients[m.C] = e
	mu.Unlock()
	emit(msg{Ev: "opened", C: m.C, Session: cl.GetSessionId(), Protocol: res.ProtocolVersion})
}

func get(c int) *entry {
	mu.Lock()
	defer mu.Unlock()
	return clients[c]
}

func call(m msg) {
	e := get(m.C)
	if e == nil {
		emit(msg{Ev: "result", C: m.C, Q: m.Q, Class: "NoClient", Message: "no such client"})
		return
	}
	req := mgmcp.CallToolRequest{}
	req.Params.Name = m.Tool
	req.Params.Arguments = m.Args
	if m.Progress != "" {
		req.Params.Meta = &mgmcp.Meta{ProgressToken: m.Progress}
	}
	ctx, cancel := context.WithTimeout(base, e.timeout)
	defer cancel()
	res, err := e.cl.CallTool(ctx, req)
	if err != nil {
		r := classify(err, ctx)
		r.Ev, r.C, r.Q = "result", m.C, m.Q
		emit(r)
		return
	}
	emit(msg{Ev: "result", C: m.C, Q: m.Q, OK: true, IsError: res.IsError})
}

// classify names an error of mcp-go v1.6.0 as mcpchaos's mcpgo kind names v1.2.1's
// (clients/fleet/driver_mcpgo.go), with the transport failure's own words where v1.6.0 has
// them: a stream that broke off is "SSE stream error", one that ended cleanly before the
// answer "SSE stream ended without a response" (v1.2.1 said "unexpected nil response" to both).
func classify(err error, ctx context.Context) msg {
	r := msg{Message: trim(err.Error())}
	var te *mgtransport.Error
	isTransport := errors.As(err, &te)
	r.Gone = errors.Is(err, mgtransport.ErrSessionTerminated)
	r.Misclassified = !r.Gone
	r.TimedOut = errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil
	r.Answered = !isTransport && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
	switch msg := err.Error(); {
	case r.Gone:
		r.Class = "ErrSessionTerminated"
	case r.TimedOut:
		r.Class = "context.DeadlineExceeded"
	case errors.Is(err, context.Canceled):
		r.Class = "context.Canceled"
	case r.Answered:
		r.Class = "JSON-RPC error"
	case strings.Contains(msg, "SSE stream ended without a response"):
		r.Class = "transport.Error(SSE stream ended without a response)"
	case strings.Contains(msg, "SSE stream error"):
		r.Class = "transport.Error(SSE stream error)"
	default:
		r.Class = "transport.Error"
	}
	return r
}

func list(m msg) {
	e := get(m.C)
	if e == nil {
		emit(msg{Ev: "result", C: m.C, Q: m.Q, Class: "NoClient", Message: "no such client"})
		return
	}
	ctx, cancel := context.WithTimeout(base, e.timeout)
	defer cancel()
	res, err := e.cl.ListTools(ctx, mgmcp.ListToolsRequest{})
	if err != nil {
		r := classify(err, ctx)
		r.Ev, r.C, r.Q = "result", m.C, m.Q
		emit(r)
		return
	}
	b, _ := json.Marshal(res)
	emit(msg{Ev: "listed", C: m.C, Q: m.Q, Tools: b})
}

// closeClient ends a client as the application ends it: Close sends the DELETE.
func closeClient(m msg) {
	mu.Lock()
	e := clients[m.C]
	delete(clients, m.C)
	mu.Unlock()
	if e != nil {
		e.mu.Lock()
		e.closing = true
		e.mu.Unlock()
		_ = e.cl.Close()
	}
	emit(msg{Ev: "closed", C: m.C})
}

func trim(s string) string {
	if len(s) > 300 {
		return s[:300]
	}
	return s
}

func main() {
	emit(msg{Ev: "ready", Library: "github.com/mark3labs/mcp-go", Version: version, PID: os.Getpid()})
	ops := map[string]func(msg){"open": open, "call": call, "list": list, "close": closeClient}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		var m msg
		if json.Unmarshal(sc.Bytes(), &m) != nil || ops[m.Op] == nil {
			emit(msg{Ev: "bad_line", Error: fmt.Sprintf("%.200s", sc.Text())})
			continue
		}
		running.Go(func() { ops[m.Op](m) })
	}
	// stdin ended: close every client (their DELETEs), then exit.
	mu.Lock()
	var all []int
	for c := range clients {
		all = append(all, c)
	}
	mu.Unlock()
	for _, c := range all {
		closeClient(msg{C: c})
	}
	stopAll()
	running.Wait()
}
