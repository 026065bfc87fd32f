package refserver

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// How the server reclaims a dead session, and how it can be told not to (Config.Leak).
//
// A session dies by TTL (found by the reaper) or by DELETE (at once). Normally its record
// is then freed (a grave keeps its death time) and its event log goes once its events have
// expired. A leaking server answers the dead session as dead all the same (liveness is a
// session-store fact and stays exact, so the clients' truth does too) but keeps the record
// and the log: the memory of a server that checks expiry on lookup and never sweeps, or
// whose DELETE handler forgets its map. Sessions held then only grow, which is what
// mcpchaos_refserver_sessions_held shows and the session-churn workload catches.

// release reclaims a session that died now (a DELETE), unless the server leaks.
func (s *Server) release(rec *session, g grave) {
	s.notice(rec, g)
	if !s.cfg.Leak {
		s.sessions.bury(map[sessionKey]grave{rec.key: g})
	}
	rec.log.end()
}

// notice counts a session's death once, by its cause, and says whether this was the first
// time (the reaper then tells its log).
func (s *Server) notice(rec *session, g grave) bool {
	if rec.noticed.Swap(true) {
		return false
	}
	if g.cause == CauseTTL {
		s.expired.Add(1)
	}
	return true
}

// refuseSession answers an initialize beyond Config.MaxSessions: 503 with a JSON-RPC error,
// as the Python SDK's server answers above its 10,000 sessions. Counted in SessionsRefused.
func (s *Server) refuseSession(w http.ResponseWriter) {
	s.refused.Add(1)
	w.Header().Set("Retry-After", "1")
	writeRPCError(w, http.StatusServiceUnavailable,
		rpcError(jsonrpc.CodeInternalError, "the server holds %d sessions, its maximum; try again later", s.cfg.MaxSessions))
}
