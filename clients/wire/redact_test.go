package wire

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
)

func TestRedactBody(t *testing.T) {
	secrets := secretsOf(http.Header{"Authorization": {"Bearer tok-12345678"}, "X-Short": {"abc"}})
	for _, c := range []struct{ in, want string }{
		{"unauthorized: Bearer tok-12345678\n", "unauthorized: [redacted]\n"},
		{"token tok-12345678 alone", "token [redacted] alone"},
		{"abc is not a secret", "abc is not a secret"},
		{"tok-1234567", "tok-1234567"}, // a prefix at the very end is released at EOF
	} {
		for name, wrap := range map[string]func(io.Reader) io.Reader{
			"whole": func(r io.Reader) io.Reader { return r }, "byte by byte": iotest.OneByteReader,
		} {
			b := &redactBody{r: io.NopCloser(wrap(strings.NewReader(c.in))), secrets: secrets}
			got, err := io.ReadAll(b)
			if err != nil || string(got) != c.want {
				t.Errorf("%s %q: got %q, %v; want %q", name, c.in, got, err, c.want)
			}
		}
	}
}

// An SSE event ends in a blank line, which cannot start a secret: it is released at once, not
// held back until the next event arrives.
func TestRedactBodyHoldsNoEventBack(t *testing.T) {
	pr, pw := io.Pipe()
	b := &redactBody{r: pr, secrets: secretsOf(http.Header{"Authorization": {"Bearer tok-12345678"}})}
	go func() { _, _ = io.WriteString(pw, "data: {}\n\n") }() // and nothing more
	buf := make([]byte, 64)
	n, err := io.ReadAtLeast(b, buf, len("data: {}\n\n"))
	if err != nil || string(buf[:n]) != "data: {}\n\n" {
		t.Fatalf("got %q, %v", buf[:n], err)
	}
	pw.Close()
}
