package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// Protocol versions of the session family that this client speaks (named in package vocab,
// which a workload's `protocol` is checked against).
const (
	Protocol20251125 = vocab.Protocol20251125
	Protocol20250618 = vocab.Protocol20250618
	Protocol20250326 = vocab.Protocol20250326
)

// Supported reports whether v is a protocol version this client can speak.
func Supported(v string) bool {
	return v == Protocol20251125 || v == Protocol20250618 || v == Protocol20250326
}

// Endpoint is an MCP endpoint and how to talk to it. One Endpoint is shared by every session
// of a group: its http.Client pools connections.
type Endpoint struct {
	URL            string
	HTTP           *http.Client
	Protocol       string        // offered in initialize
	RequestTimeout time.Duration // every POST and DELETE, and a GET until its headers arrive
	MaxBody        int64         // cap on a JSON body
	MaxEvent       int           // cap on one SSE event
	ClientName     string
	// Generation is what the server speaks (Negotiate finds out). For Stateless, Protocol is
	// the stateless revision and sessions are only request contexts: no initialize, no id, no
	// GET stream, no DELETE.
	Generation Generation
	// Responder answers the requests the server sends (ping, roots/list, sampling,
	// elicitation) and decides which capabilities initialize advertises; nil answers ping
	// and refuses the rest, advertising nothing.
	Responder *Responder

	idChanged atomic.Int64 // replies naming a session id other than the one sent
}

// NewTransport returns an HTTP/1.1 transport sized for many sessions to one host: every held
// session keeps one connection for its GET stream and borrows pooled ones for POSTs. Buffers
// are small because MCP messages here are small, and each held stream pays for them.
//
// At most maxIdle POST connections wait idle in the pool, whatever maxConns is: a server holds
// a descriptor for each, on top of one per held stream, and a pool sized by the sessions held
// (19,000 sessions calling once a minute left as many idle connections open after a burst of
// late calls) took the reference server past its 20,000 descriptors. Requests in flight are
// not capped: a busy workload reuses what it returns at once, and the pool only closes what
// a burst left over.
func NewTransport(maxConns int) *http.Transport {
	idle := min(maxConns, maxIdle)
	return &http.Transport{
		Proxy:                  nil, // loopback proxies are in the URL; never an environment proxy
		DialContext:            (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:           idle,
		MaxIdleConnsPerHost:    idle,
		IdleConnTimeout:        90 * time.Second,
		ResponseHeaderTimeout:  0, // per request, through its context
		MaxResponseHeaderBytes: MaxHeaderBytes,
		DisableCompression:     true,
		ReadBufferSize:         2 << 10,
		WriteBufferSize:        2 << 10,
		ForceAttemptHTTP2:      false,
	}
}

// maxIdle caps the idle pooled connections of one transport (NewTransport).
const maxIdle = 128

// MaxHeaderBytes caps a response's header block, on pooled connections and held streams alike.
const MaxHeaderBytes = 64 << 10

// The caps a run's endpoints put on what a server sends (Endpoint.MaxBody, Endpoint.MaxEvent):
// one place for every endpoint the engine and the bench make (inspect keeps its own, smaller).
const (
	MaxBody  = 4 << 20 // a JSON body
	MaxEvent = 1 << 20 // one SSE event, and so one SSE line
)

// maxSessionID caps the length of a session id the client accepts: it is sent back on every
// request, so a huge one would cost every request of the session.
const maxSessionID = 1 << 10

// Initialize opens a session: initialize, then notifications/initialized. Against a stateless
// server there is nothing to open: it returns a session that only carries the protocol.
func (ep *Endpoint) Initialize(ctx context.Context) (*Session, *Reply, error) {
	if ep.Generation == Stateless {
		return &Session{ep: ep, Protocol: ep.Protocol, Stateless: true}, nil, nil
	}
	s := &Session{ep: ep}
	params := &initializeParams{
		ProtocolVersion: ep.Protocol,
		ClientInfo:      &mcp.Implementation{Name: ep.ClientName, Version: "1"},
		Capabilities:    ep.Responder.capabilities(),
	}
	rep, hdr, err := s.post(ctx, "initialize", params, true)
	if err != nil {
		return nil, rep, err
	}
	if !rep.OK() {
		return nil, rep, &StatusError{Status: rep.Status, Body: rep.Body, RPC: rep.RPCError}
	}
	var res mcp.InitializeResult
	if err := json.Unmarshal(rep.Result, &res); err != nil {
		return nil, rep, &ProtocolError{Msg: "initialize result: " + err.Error()}
	}
	if !Supported(res.ProtocolVersion) {
		return nil, rep, &ProtocolError{Msg: fmt.Sprintf("server chose protocol %q, which this client does not speak", res.ProtocolVersion)}
	}
	s.Protocol = res.ProtocolVersion
	//lint:ignore SA1019 logging is deprecated from 2026-07-28 on; session-family servers offer it
	s.Logging = res.Capabilities != nil && res.Capabilities.Logging != nil
	s.ID = hdr.Get("Mcp-Session-Id")
	if err := checkSessionID(s.ID); err != nil {
		return nil, rep, err
	}
	if _, _, err := s.post(ctx, "notifications/initialized", nil, false); err != nil {
		return nil, rep, err
	}
	return s, rep, nil
}

// initializeParams are initialize's params with the capabilities as this client builds them:
// mcp.ClientCapabilities always marshals "roots" (its Roots field is a struct, which omitempty
// does not leave out), and a client must advertise only what it serves.
type initializeParams struct {
	ProtocolVersion string              `json:"protocolVersion"`
	Capabilities    map[string]any      `json:"capabilities"`
	ClientInfo      *mcp.Implementation `json:"clientInfo"`
}

// checkSessionID enforces the transport's rule for session ids (visible ASCII, 0x21 to 0x7E)
// and the client's cap on their length.
func checkSessionID(id string) error {
	if len(id) > maxSessionID {
		return &BadSessionIDError{Reason: fmt.Sprintf("%d bytes long, over the cap of %d", len(id), maxSessionID)}
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return &BadSessionIDError{Reason: fmt.Sprintf("byte 0x%02x at offset %d is not visible ASCII", id[i], i)}
		}
	}
	return nil
}
