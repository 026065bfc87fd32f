package wire

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/redact"
)

// Conn says how to reach a target by URL: through which address, over which HTTP version,
// trusting which certificates, with which extra headers.
//
// The client always speaks to the URL's host: the Host header and the TLS server name come
// from URL even when Dial sends the bytes elsewhere (a Toxiproxy listener in front of the
// target). A load balancer or virtual host behind the proxy sees the request it would see
// without mcpchaos in the way.
type Conn struct {
	URL *url.URL
	// Dial is the host:port to connect to instead of the URL's host, or "" for the URL's host.
	Dial string
	// Header holds extra headers for every request (Authorization, say). Values may be secrets:
	// nothing here ever prints them.
	Header http.Header
	// RootCAs are the certificates trusted for https; nil means the system's.
	RootCAs *x509.CertPool
	// InsecureSkipVerify accepts any certificate. Only ever set on the user's explicit request.
	InsecureSkipVerify bool
	// HTTP2 speaks HTTP/2 (h2 over TLS, prior-knowledge h2c over plain http) instead of HTTP/1.1.
	// Over HTTP/2 every session of a group shares one TCP connection, so one cut connection is
	// a drop for all of them at once; over HTTP/1.1 each held stream has a connection of its own.
	HTTP2 bool
	// MaxConns sizes the connection pool (HTTP/1.1).
	MaxConns int
	// Redact is the connection's secrets (Secrets), built once and shared by every client made
	// from this Conn (a run's groups); nil: NewHTTPClient builds them.
	Redact *redact.Set
}

// maxCAFile bounds a CA file read (1 MiB, as workloads.MaxCAFileSize): --ca-file /dev/zero
// must not be read forever.
const maxCAFile = 1 << 20

// LoadCAFile reads PEM certificates to trust for a target, from a regular file of at most
// maxCAFile bytes.
func LoadCAFile(path string) (*x509.CertPool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO must not block the open
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("CA file %s: not a regular file; give the path of a PEM file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCAFile+1))
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	if len(data) > maxCAFile {
		return nil, fmt.Errorf("CA file %s: larger than %d bytes, more than any CA bundle; give the path of a PEM file", path, maxCAFile)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate in it; give a file with one or more \"-----BEGIN CERTIFICATE-----\" blocks", path)
	}
	return pool, nil
}

// NewHTTPClient returns the HTTP client for a target reached by URL. Like NewTransport it never
// uses an environment proxy: the only thing in the way is the one mcpchaos puts there.
func NewHTTPClient(c Conn) (*http.Client, error) {
	if c.URL == nil || (c.URL.Scheme != "http" && c.URL.Scheme != "https") || c.URL.Host == "" {
		return nil, errors.New("target URL must be absolute, http:// or https://")
	}
	t := NewTransport(max(c.MaxConns, 2))
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if c.Dial != "" {
		to := c.Dial
		t.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, to)
		}
	} else {
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if err := invalidName(network, addr); err != nil {
				return nil, err
			}
			return dialer.DialContext(ctx, network, addr)
		}
	}
	if c.URL.Scheme == "https" {
		t.TLSClientConfig = &tls.Config{
			RootCAs:            c.RootCAs,
			InsecureSkipVerify: c.InsecureSkipVerify, //nolint:gosec // the user asked for it by name
			MinVersion:         tls.VersionTLS12,
		}
		t.TLSHandshakeTimeout = 10 * time.Second
	}
	var p http.Protocols
	switch {
	case !c.HTTP2:
		p.SetHTTP1(true)
	case c.URL.Scheme == "https":
		p.SetHTTP2(true)
	default:
		p.SetUnencryptedHTTP2(true)
	}
	t.Protocols = &p
	var rt http.RoundTripper = Streaming(t) // held streams on connections of their own
	secrets := c.Redact
	if secrets == nil {
		secrets = c.Secrets()
	}
	rt = &headerTransport{base: rt, header: c.Header.Clone(), secrets: secrets, conduct: &Conduct{}}
	return &http.Client{Transport: rt, CheckRedirect: SameOrigin(c.URL)}, nil
}

// maxRedirects bounds a chain of same-origin redirects (a loop ends here).
const maxRedirects = 5

// SameOrigin is an http.Client CheckRedirect that follows a redirect only to the target's own
// origin (scheme, host and port), at most maxRedirects times. A server under test must not be
// able to send the tool, its headers (tokens) and its load to another host.
func SameOrigin(target *url.URL) func(*http.Request, []*http.Request) error {
	origin := target.Scheme + "://" + HostPort(target)
	return func(req *http.Request, via []*http.Request) error {
		if o := req.URL.Scheme + "://" + HostPort(req.URL); o != origin {
			return &RedirectError{Reason: "to another origin, " + o}
		}
		if len(via) > maxRedirects {
			return &RedirectError{Reason: fmt.Sprintf("more than %d in a row", maxRedirects)}
		}
		return nil
	}
}

// RedirectError is a redirect the client refused to follow.
type RedirectError struct{ Reason string }

func (e *RedirectError) Error() string { return "redirect refused: " + e.Reason }

// headerTransport adds the target's extra headers to every request, ours and those of clients
// mcpchaos does not write (the Go SDK's).
type headerTransport struct {
	base    http.RoundTripper
	header  http.Header
	secrets *redact.Set // cut out of response bodies and errors (redact.go)
	conduct *Conduct    // what the server did (conduct.go)
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req
	if len(h.header) > 0 {
		r = req.Clone(req.Context())
		for k, vs := range h.header {
			r.Header[k] = append([]string(nil), vs...)
		}
	}
	resp, err := h.conduct.observe(h.base, r)
	if err == nil {
		resp.Body = h.secrets.Reader(resp.Body)
	}
	return resp, err
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the pool.
func (h *headerTransport) CloseIdleConnections() {
	if c, ok := h.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// DefaultPort is the port a URL names, explicitly or by its scheme.
func DefaultPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// HostPort is the URL's host:port, with the scheme's port when none is written.
func HostPort(u *url.URL) string { return net.JoinHostPort(u.Hostname(), DefaultPort(u)) }

// invalidName refuses a name under the special-use TLD .invalid at once, without asking a
// resolver, as RFC 6761 (6.4) asks of name resolution libraries (Go's resolver asks the DNS).
func invalidName(network, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h != "invalid" && !strings.HasSuffix(h, ".invalid") {
		return nil
	}
	return &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host (.invalid never resolves, RFC 6761)", Name: host, IsNotFound: true}}
}
