package wire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/loopback"
)

// testCA is a certificate authority made for one test, and a server certificate it signed for
// localhost and 127.0.0.1.
type testCA struct {
	pemFile string // the CA certificate, PEM, in a temporary file
	server  tls.Certificate
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mcpchaos test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &testCA{pemFile: path, server: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}}
}

// seen is what a test server learnt about the requests it got.
type seen struct {
	mu        sync.Mutex
	host, sni string
	proto     int
	token     string
}

// startEchoServer serves one handler on loopback, over TLS when ca is not nil, accepting
// HTTP/1.1 and HTTP/2 (h2, or h2c without TLS).
func startEchoServer(t *testing.T, ca *testCA, s *seen) string {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.host, s.proto, s.token = r.Host, r.ProtoMajor, r.Header.Get("X-Token")
		if r.TLS != nil {
			s.sni = r.TLS.ServerName
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	if ca != nil {
		return "https://" + loopback.Serve(t, h, &ca.server)
	}
	return "http://" + loopback.Serve(t, h, nil)
}

// A target reached through a proxy still gets its own Host header and TLS server name, over
// the HTTP version asked for, with the extra headers.
func TestConnThroughProxy(t *testing.T) {
	ca := newTestCA(t)
	inj, err := faults.NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	for _, tc := range []struct {
		name  string
		tls   bool
		http2 bool
	}{
		{"http/1.1", false, false},
		{"h2c", false, true},
		{"https/1.1", true, false},
		{"h2", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s seen
			var c *testCA
			if tc.tls {
				c = ca
			}
			addr := startEchoServer(t, c, &s)
			u, _ := url.Parse(addr)
			listen, err := inj.AddProxy(context.Background(), "p-"+strings.ReplaceAll(tc.name, "/", "-"), u.Host)
			if err != nil {
				t.Fatal(err)
			}
			// The URL names localhost, the name in the certificate; the bytes go to the proxy.
			target, _ := url.Parse(u.Scheme + "://localhost:" + u.Port() + "/mcp")
			conn := Conn{URL: target, Dial: listen, HTTP2: tc.http2, Header: http.Header{"X-Token": {"s3cret"}}}
			if tc.tls {
				pool, err := LoadCAFile(ca.pemFile)
				if err != nil {
					t.Fatal(err)
				}
				conn.RootCAs = pool
			}
			hc, err := NewHTTPClient(conn)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := hc.Get(target.String())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.host != target.Host {
				t.Errorf("server saw Host %q, want %q", s.host, target.Host)
			}
			if tc.tls && s.sni != "localhost" {
				t.Errorf("server saw TLS server name %q, want localhost", s.sni)
			}
			if want := map[bool]int{false: 1, true: 2}[tc.http2]; s.proto != want || resp.ProtoMajor != want {
				t.Errorf("HTTP/%d on the server, HTTP/%d on the client, want HTTP/%d", s.proto, resp.ProtoMajor, want)
			}
			if s.token != "s3cret" {
				t.Errorf("extra header X-Token = %q", s.token)
			}
		})
	}
}

func TestConnTLSTrust(t *testing.T) {
	ca := newTestCA(t)
	var s seen
	addr := startEchoServer(t, ca, &s)
	u, _ := url.Parse(addr)
	target, _ := url.Parse("https://localhost:" + u.Port() + "/")
	for _, tc := range []struct {
		name    string
		conn    Conn
		wantErr string
	}{
		{"system roots refuse a private CA", Conn{URL: target}, "certificate"},
		{"the CA file is trusted", Conn{URL: target, RootCAs: mustPool(t, ca.pemFile)}, ""},
		{"explicit opt-out of verification", Conn{URL: target, InsecureSkipVerify: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc, err := NewHTTPClient(tc.conn)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := hc.Get(target.String())
			if err == nil {
				resp.Body.Close()
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("GET: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("GET: %v, want an error about %q", err, tc.wantErr)
			}
		})
	}
}

func mustPool(t *testing.T, path string) *x509.CertPool {
	t.Helper()
	p, err := LoadCAFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadCAFileErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	os.WriteFile(junk, []byte("not a certificate"), 0o600)
	if _, err := LoadCAFile(junk); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("junk file: %v", err)
	}
	if _, err := LoadCAFile(filepath.Join(dir, "missing.pem")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	// --ca-file /dev/zero is refused, not read without end.
	if _, err := LoadCAFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("/dev/zero: %v", err)
	}
	big := filepath.Join(dir, "big.pem")
	os.WriteFile(big, make([]byte, maxCAFile+1), 0o600)
	if _, err := LoadCAFile(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big file: %v", err)
	}
}
