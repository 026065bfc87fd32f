package wire

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/mcpchaos/mcpchaos/redact"
)

// A server may reflect what it was sent (an error page quoting the Authorization header,
// JSON-escaped or percent-encoded), and the start of a body ends up in error messages, the
// summary and inspect's fingerprint. So the target's secrets (the values of its extra headers,
// the user-info and query of its URL), in every encoding package redact knows, are cut out of
// every response body as it is read (transport.go), and out of every error a request ends
// with. Texts decoded from a body are redacted once more where they leave for an output
// (engine.Run, inspect.Inspect): an escape the raw bytes hid is plain there.

// Secrets is the set of a connection's secrets: the values of its extra headers and the
// user-info and query of its URL.
func (c Conn) Secrets() *redact.Set {
	s := redact.New()
	s.AddHeader(c.Header)
	s.AddURL(c.URL)
	return s
}

// A redirect's Location ends up verbatim in the error http.Client returns (the *url.Error's
// URL), and a server may put a token there: echoed from a header, or its own. So every error
// of a request leaves this package through redactError: the URL in it is shown as redact.URL
// shows it, and the target's secrets are cut out of its text in every encoding (a token
// percent-encoded in a redirect's path).

// redactError returns err fit for output; hc is the client that made the request (its
// transport knows the target's secrets).
func redactError(err error, hc *http.Client) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = redact.URLString(ue.URL)
	}
	var secrets *redact.Set
	if hc != nil {
		if ht, ok := hc.Transport.(*headerTransport); ok {
			secrets = ht.secrets
		}
	}
	return secrets.Out(err)
}
