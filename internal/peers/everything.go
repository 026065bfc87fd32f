package peers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Everything starts the official everything server (@modelcontextprotocol/server-everything,
// locked in everything/package-lock.json; `npm ci` there, .ci/run does it), its
// streamable-HTTP transport, under the machine's node, on loopback (everything/start.mjs binds
// it there and picks a free port). It is the reference team's own example of a server: the
// TypeScript SDK's transport with an event store, sessions that never expire (it forgets a
// session only when its transport closes, which only a DELETE does), and 400 ("No valid
// session ID provided") for a session it does not know, on POST, GET and DELETE. Its tools
// are its own (echo, get-sum, trigger-long-running-operation, ...), not the ones the other
// peers share. Stats returns the server's own record (start.mjs). Without node or the
// package, the test fails under CI=true and is skipped otherwise, saying what is missing.
func Everything(t testing.TB) *Server {
	t.Helper()
	dir := peerDir("everything")
	needNode(t, dir, "@modelcontextprotocol/server-everything")
	u := startNode(t, dir, []string{"PORT=0"}, "MCPCHAOS_URL ", "start.mjs")
	record := strings.TrimSuffix(u, "/mcp") + "/mcpchaos/record"
	return &Server{Name: "everything", URL: u, stats: func() Stats {
		var st Stats
		c := http.Client{Timeout: 10 * time.Second}
		resp, err := c.Get(record)
		if err == nil {
			defer resp.Body.Close()
			err = json.NewDecoder(resp.Body).Decode(&st)
		}
		if err != nil {
			t.Errorf("reading the everything server's record: %v", err)
		}
		return st
	}}
}
