// Package loopback serves HTTP handlers on 127.0.0.1 for the tests of every package: the
// reference server's peers, the official Go SDK's servers, TLS and HTTP/2 echo servers. It
// never listens anywhere but loopback.
package loopback

import (
	"crypto/tls"
	"net"
	"net/http"
	"testing"
)

// Serve serves h on a free loopback port until the test ends, accepting HTTP/1.1 and HTTP/2
// (h2 over TLS when cert is given, h2c without), and returns host:port.
func Serve(t testing.TB, h http.Handler, cert *tls.Certificate) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: h, Protocols: &p}
	if cert != nil {
		hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}}
		go hs.ServeTLS(ln, "", "")
	} else {
		go hs.Serve(ln)
	}
	t.Cleanup(func() { hs.Close() }) // held streams would keep a graceful Shutdown waiting
	return ln.Addr().String()
}

// FreePort is a loopback TCP port free at the moment of the call, for a process of the test's
// own (a server that takes its port as a flag). Another process may take it before that one
// listens; the callers' start-up fails then and says so.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
