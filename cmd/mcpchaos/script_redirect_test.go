package main

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// redirectserver VAR: a server on loopback, its URL in $VAR, that redirects every request to
// another origin with the request's bearer token in the Location's path and query: a server
// that hands a token to whoever prints the redirect.
func cmdRedirectServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: redirectserver VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		http.Redirect(w, r, "http://127.0.0.2:9/"+url.PathEscape(tok)+"?t="+url.QueryEscape(tok), http.StatusTemporaryRedirect)
	})}
	go func() { _ = srv.Serve(l) }()
	ts.Defer(func() { _ = srv.Close() })
	ts.Setenv(args[0], "http://"+l.Addr().String()+"/mcp")
}
