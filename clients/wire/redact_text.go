package wire

import (
	"bytes"
	"net/http"
)

// RedactText cuts secrets out of text the way response bodies are redacted: the values of h
// (a target's extra headers) and each of their words, and the extra secrets (e.g. the
// expanded environment of a deploy command), each replaced by "[redacted]". Values shorter
// than 8 bytes are left, as they would match by accident.
func RedactText(text []byte, h http.Header, extra ...string) []byte {
	secrets := secretsOf(h)
	for _, s := range extra {
		if len(s) >= minSecret {
			secrets = append(secrets, []byte(s))
		}
	}
	for _, s := range secrets {
		if bytes.Contains(text, s) {
			text = bytes.ReplaceAll(text, s, []byte(redacted))
		}
	}
	return text
}
