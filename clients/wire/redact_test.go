package wire

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/loopback"
)

// A server that quotes the Authorization header in its body, JSON-escaped the way PHP does
// (`\/`) or percent-encoded: what the client reads has none of it.
func TestBodiesAreRedacted(t *testing.T) {
	const token = "Zm9vYmFy/YmF6+cXV4aGVsbG8="
	for name, echo := range map[string]func(string) string{
		"literal":     func(s string) string { return s },
		"php json":    func(s string) string { return strings.ReplaceAll(s, "/", `\/`) },
		"query":       url.QueryEscape,
		"path escape": url.PathEscape,
	} {
		t.Run(name, func(t *testing.T) {
			addr := loopback.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, `{"error":"bad `+echo(r.Header.Get("Authorization"))+`"}`)
			}), nil)
			u, _ := url.Parse("http://" + addr + "/mcp")
			hc, err := NewHTTPClient(Conn{URL: u, Header: http.Header{"Authorization": {"Bearer " + token}}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := hc.Get(u.String())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != `{"error":"bad [redacted]"}` {
				t.Errorf("got %q", body)
			}
		})
	}
}
