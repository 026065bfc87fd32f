package wire

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// A server may reflect what it was sent (an error page quoting the Authorization header), and
// the start of a body ends up in error messages, the summary and inspect's fingerprint. So the
// values of a target's extra headers, which may be tokens, are cut out of every response body
// before anything reads it.

// redacted replaces a secret in a response body.
const redacted = "[redacted]"

// minSecret is the shortest value treated as a secret: shorter ones would match by accident.
const minSecret = 8

// secretsOf lists what to cut out for a target's extra headers: each whole value and each of
// its words ("Bearer TOKEN" → the token too).
func secretsOf(h http.Header) [][]byte {
	var out [][]byte
	for _, vs := range h {
		for _, v := range vs {
			for _, s := range append([]string{v}, strings.Fields(v)...) {
				if len(s) >= minSecret {
					out = append(out, []byte(s))
				}
			}
		}
	}
	return out
}

// redactBody passes a body through with every secret replaced. It holds back only a tail that
// could be the start of a secret, so a stream's events are not delayed.
type redactBody struct {
	r       io.ReadCloser
	secrets [][]byte
	pending []byte // read, redacted, not yet returned
	held    int    // the last held bytes of pending may start a secret
	err     error  // from r, returned once pending is out
	scratch []byte
}

func (b *redactBody) Read(p []byte) (int, error) {
	for {
		if out := len(b.pending) - b.held; out > 0 || (b.err != nil && len(b.pending) > 0) {
			if b.err != nil {
				out = len(b.pending)
			}
			n := copy(p, b.pending[:out])
			b.pending = b.pending[n:]
			if len(b.pending) == 0 {
				b.pending = nil
			}
			return n, nil
		}
		if b.err != nil {
			return 0, b.err
		}
		if b.scratch == nil {
			b.scratch = make([]byte, 1<<10)
		}
		n, err := b.r.Read(b.scratch)
		b.pending = append(b.pending, b.scratch[:n]...)
		b.err = err
		for _, s := range b.secrets {
			if bytes.Contains(b.pending, s) {
				b.pending = bytes.ReplaceAll(b.pending, s, []byte(redacted))
			}
		}
		b.held = 0
		if err == nil {
			b.held = b.secretStart()
		}
	}
}

// secretStart is the length of the longest tail of pending that is a proper prefix of a secret.
func (b *redactBody) secretStart() int {
	held := 0
	for _, s := range b.secrets {
		for k := min(len(s)-1, len(b.pending)); k > held; k-- {
			if bytes.HasSuffix(b.pending, s[:k]) {
				held = k
				break
			}
		}
	}
	return held
}

func (b *redactBody) Close() error { return b.r.Close() }

// A redirect's Location ends up verbatim in the error http.Client returns (the *url.Error's
// URL), and a server may put a token there: echoed from a header, or its own. So every error
// of a request leaves this package through redactError: the URL in it is cut to scheme, host
// and path, and the target's header secrets are cut out of its text wherever they appear.

// redactError returns err fit for output; hc is the client that made the request (its
// transport knows the target's header secrets).
func redactError(err error, hc *http.Client) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = RedactURL(ue.URL)
	}
	var secrets [][]byte
	if hc != nil {
		if ht, ok := hc.Transport.(*headerTransport); ok {
			secrets = ht.secrets
		}
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), string(s)) {
			return &redactedError{err: err, secrets: secrets}
		}
	}
	return err
}

// RedactURL is a URL fit for output: scheme, host and path; no user-info, query or fragment,
// which may carry credentials. Text that does not parse as a URL is withheld.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	if u.User == nil && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery {
		return raw
	}
	u.User, u.RawQuery, u.Fragment, u.ForceQuery = nil, "", "", false
	return u.String() + "?[redacted]"
}

// redactedError is an error whose text had secrets in it; it keeps the chain for errors.As.
type redactedError struct {
	err     error
	secrets [][]byte
}

func (e *redactedError) Error() string {
	s := e.err.Error()
	for _, sec := range e.secrets {
		s = strings.ReplaceAll(s, string(sec), redacted)
	}
	return s
}

func (e *redactedError) Unwrap() error { return e.err }
