package clients

import (
	"bytes"
	"io"
	"net/http"
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
