package refserver

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// statelessMetaParams are params carrying the _meta the stateless revision requires.
func statelessMetaParams(extra map[string]any) map[string]any {
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    protocolStateless,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.mcpchaos/call":                           "g/0/1",
	}}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// A request of the stateless revision (Mcp-Method, no session id) stands alone: server/discover
// names the stateless revision and the session family, a tool call runs without any
// initialize (and is counted per logical call like any), a request without the revision's
// _meta is refused, and no session is made. initialize stays the session family's.
func TestStatelessRequests(t *testing.T) {
	srv, url := serve(t, Config{SessionTTL: time.Minute})
	c := newClient(t, url)
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	a := readAnswer(t, c.post("server/discover", statelessMetaParams(nil), "Mcp-Method", "server/discover"))
	a.result(t, &d)
	if !slices.Equal(d.SupportedVersions, append([]string{protocolStateless}, protocolVersions...)) {
		t.Errorf("server/discover named %v", d.SupportedVersions)
	}
	call := statelessMetaParams(map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
	for range 2 {
		var r callResult
		readAnswer(t, c.post("tools/call", call, "Mcp-Method", "tools/call")).result(t, &r)
		if len(r.Content) != 1 || r.Content[0].Text != "hi" {
			t.Errorf("stateless echo: %+v", r)
		}
	}
	if got := srv.RunTwice().ByGroup["g"]; got != 1 {
		t.Errorf("the same logical call run twice: the server counted %d duplicates, want 1", got)
	}
	resp := c.post("tools/list", map[string]any{}, "Mcp-Method", "tools/list")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a stateless request without the revision's _meta: status %d, want 400", resp.StatusCode)
	}
	if st := srv.Stats(); st.SessionsCreated != 0 {
		t.Errorf("stateless requests made %d sessions", st.SessionsCreated)
	}
	mustInit(t, url) // initialize with the headers of a session-family client still works
}
