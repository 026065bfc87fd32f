package refserver

import (
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Protocol eras (Config.Era): which generations of the protocol a server speaks. During a
// rolling upgrade the replicas behind one origin speak different ones (2025 sessions only,
// both, then 2026-07-28 only), and the same 404 then means a dead session on one replica and
// an unknown method on the next (notes/protocol.md, "404 means two things now").
const (
	EraBoth      = "both"      // the session family and the stateless revision (the default)
	EraSession   = "session"   // 2025-11-25 and older only: a stateless request has no session
	EraStateless = "stateless" // 2026-07-28 only: no initialize, no session, no GET stream
)

// eraRefuses answers, for a server of Config.Era, what a server of that era answers a request of the
// other generation, and reports whether it did. A stateless-only server answers initialize
// with 404 and JSON-RPC -32601 (an unknown method in 2026-07-28), a session request without
// the Mcp-Method header with 400 (as the Go SDK's stateless server does), and GET or DELETE
// with 405; a session-only server answers a stateless request as a request without a
// session: 400. Each such answer is counted (Stats.WrongEra).
func (s *Server) eraRefuses(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
	method := ""
	if req != nil {
		method = req.Method
	}
	switch s.cfg.Era {
	case EraStateless:
		switch {
		case r.Method == http.MethodGet || r.Method == http.MethodDelete:
			w.Header().Set("Allow", "POST")
			http.Error(w, "this server speaks "+protocolStateless+" only: no session, no GET stream", http.StatusMethodNotAllowed)
		case method == "initialize" && req.IsCall():
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write(encodeResponse(req.ID, nil, rpcError(jsonrpc.CodeMethodNotFound,
				"method not found: initialize (this server speaks %s only)", protocolStateless)))
		case r.Header.Get("Mcp-Method") == "":
			writeRPCError(w, http.StatusBadRequest, rpcError(jsonrpc.CodeInvalidRequest,
				"missing required Mcp-Method header (this server speaks %s only)", protocolStateless))
		default:
			return false
		}
	case EraSession:
		if r.Method != http.MethodPost || !statelessRequest(r) || method == "initialize" {
			return false
		}
		http.Error(w, "Bad Request: missing Mcp-Session-Id (this server speaks the 2025 session revisions only)", http.StatusBadRequest)
	default:
		return false
	}
	s.wrongEra.Add(1)
	return true
}

func validEra(e string) error {
	switch e {
	case "", EraBoth, EraSession, EraStateless:
		return nil
	}
	return fmt.Errorf("era %q: want %q, %q or %q", e, EraBoth, EraSession, EraStateless)
}
