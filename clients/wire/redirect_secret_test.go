package wire

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/loopback"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// A server that echoes the target's token into a redirect's Location, or puts a credential
// there of its own: the error the request ends with still names the redirect, and carries
// neither.
func TestRedirectSecretsNeverInErrors(t *testing.T) {
	const token = "s3cr3t-t0ken-4242"
	const own = "server-own-pa55"
	for _, tc := range []struct {
		name     string
		location func(r *http.Request) string
	}{
		{"token in the query, other origin", func(r *http.Request) string {
			return "http://127.0.0.2:9/steal?t=" + url.QueryEscape(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		}},
		{"token in the path, other origin", func(r *http.Request) string {
			return "http://127.0.0.2:9/" + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		}},
		{"credential in the user-info", func(*http.Request) string { return "http://admin:" + own + "@127.0.0.2:9/" }},
		{"credential in the query, same origin, a loop", func(r *http.Request) string { return "/mcp?key=" + own }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := loopback.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, tc.location(r), http.StatusTemporaryRedirect)
			}), nil)
			raw := "http://" + addr + "/mcp"
			u, _ := url.Parse(raw)
			hc, err := NewHTTPClient(Conn{URL: u, Header: http.Header{"Authorization": {"Bearer " + token}}})
			if err != nil {
				t.Fatal(err)
			}
			ep := &Endpoint{URL: raw, HTTP: hc, Protocol: Protocol20251125, RequestTimeout: 5 * time.Second,
				MaxBody: 64 << 10, MaxEvent: 64 << 10, ClientName: "redirect-test"}
			_, _, err = ep.Initialize(context.Background())
			if err == nil {
				t.Fatal("a redirect away was followed")
			}
			if Kind(err) != metrics.ErrRedirect {
				t.Errorf("classified %v: %v", Kind(err), err)
			}
			for _, secret := range []string{token, own} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error carries %q: %v", secret, err)
				}
			}
			t.Log(err)
		})
	}
}
