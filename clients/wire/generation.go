package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// Generation is the family of protocol revisions a server speaks.
type Generation int

const (
	// SessionFamily is 2025-03-26 … 2025-11-25: initialize, Mcp-Session-Id, a GET stream,
	// Last-Event-ID resumption. Everything the seed is about.
	SessionFamily Generation = iota
	// Stateless is the 2026-07-28 revision: no initialize, no session, no GET stream, no
	// resumption. A broken response stream loses its request, which the client must re-issue
	// with a new id.
	Stateless
)

func (g Generation) String() string {
	if g == Stateless {
		return "stateless"
	}
	return "session"
}

// ProtocolStateless is the stateless revision this client speaks.
const ProtocolStateless = vocab.ProtocolStateless

// Negotiated is what Negotiate learnt of a server.
type Negotiated struct {
	Generation Generation
	// Protocol is ProtocolStateless for a stateless server; for the session family it is left
	// to initialize.
	Protocol string
	// Supported lists the versions the server named in server/discover, if it knows that method.
	Supported []string
}

// Negotiate learns which generation the server speaks, before any session: it asks
// server/discover (the stateless revision's handshake). A server that names no session-family
// version this client speaks, and names the stateless one, is Stateless; any other answer
// (including a server that does not know server/discover) means the session family, whose
// version initialize negotiates. Only a failure to reach the server is an error.
func (ep *Endpoint) Negotiate(ctx context.Context) (Negotiated, error) {
	versions, err := ep.Discover(ctx)
	if err != nil {
		return Negotiated{}, err
	}
	n := Negotiated{Generation: SessionFamily, Protocol: ep.Protocol, Supported: versions}
	if len(versions) == 0 || slices.ContainsFunc(versions, Supported) {
		return n, nil
	}
	if slices.Contains(versions, ProtocolStateless) {
		n.Generation, n.Protocol = Stateless, ProtocolStateless
		return n, nil
	}
	return n, &ProtocolError{Msg: fmt.Sprintf("the server speaks only %s, none of which this client speaks (%s, %s, %s, %s)",
		strings.Join(versions, ", "), Protocol20251125, Protocol20250618, Protocol20250326, ProtocolStateless)}
}

// Discover sends server/discover as the stateless revision does and returns the versions the
// server says it supports; none (and no error) when the server does not answer it with a
// result, as session-family servers do not.
func (ep *Endpoint) Discover(ctx context.Context) ([]string, error) {
	s := &Session{ep: ep, Protocol: ProtocolStateless, Stateless: true}
	rep, err := s.Call(ctx, "server/discover", nil)
	if err != nil {
		if rep != nil {
			return nil, nil // the server answered, in a way of its own: not a stateless server
		}
		return nil, err
	}
	if !rep.OK() {
		return nil, nil
	}
	var res struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(rep.Result, &res) != nil {
		return nil, nil
	}
	return res.SupportedVersions, nil
}

// withMeta returns params as a JSON object carrying the per-request _meta that the stateless
// revision requires in place of initialize: protocol version, client info, capabilities.
func (s *Session) withMeta(params any) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &obj); err != nil {
			return nil, fmt.Errorf("params of a stateless request must be an object: %w", err)
		}
	}
	meta := map[string]json.RawMessage{}
	if m, ok := obj["_meta"]; ok {
		_ = json.Unmarshal(m, &meta)
	}
	info, _ := json.Marshal(&mcp.Implementation{Name: s.ep.ClientName, Version: "1"})
	meta[mcp.MetaKeyProtocolVersion], _ = json.Marshal(s.Protocol)
	meta[mcp.MetaKeyClientInfo] = info
	meta[mcp.MetaKeyClientCapabilities] = json.RawMessage("{}")
	obj["_meta"], _ = json.Marshal(meta)
	return json.Marshal(obj)
}

// statelessHeaders sets the headers the stateless revision routes by.
func statelessHeaders(req *http.Request, method string, params any) {
	req.Header.Set("Mcp-Method", method)
	if p, ok := params.(*mcp.CallToolParams); ok && p.Name != "" {
		req.Header.Set("Mcp-Name", p.Name)
	}
}
