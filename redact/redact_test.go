package redact

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
)

func TestEveryEncodingIsCut(t *testing.T) {
	for _, secret := range []string{"Zm9vYmFy/YmF6+cXV4aGVsbG8=", `tok"en\wi th%/+=`, "s3cr3t-t0ken-4242", "päss/wörd+€😀"} {
		s := New(secret)
		for name, enc := range Encodings(secret) {
			text := "before " + enc + " after"
			got := s.String(text)
			if strings.Contains(got, enc) || !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
				t.Errorf("%q %s: %q became %q", secret, name, text, got)
			}
		}
	}
}

// A secret inside a longer base64 text, at each of the three alignments: the characters that
// only its bits decide are cut.
func TestBase64Alignments(t *testing.T) {
	secret := "Bearer Zm9v/YmFy+YmF6="
	s := New(secret)
	for k := 0; k < 3; k++ {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			text := enc.EncodeToString([]byte(strings.Repeat("x", k) + `{"auth":"` + secret + `","n":1}`))
			if got := s.String(text); got == text || !strings.Contains(got, Mark) {
				t.Errorf("alignment %d: %q not cut: %q", k, text, got)
			}
		}
	}
}

func TestHeaderAndURLSecrets(t *testing.T) {
	s := New()
	s.AddHeader(http.Header{"Authorization": {"Bearer tok-12345678"}, "X-Basic": {"Basic " + base64.StdEncoding.EncodeToString([]byte("admin:pa55w0rd!"))}, "X-Short": {"abc"}})
	u, _ := url.Parse("http://u:hunter2-secret@h/p?key=k3y-value%2Fx&x=1")
	s.AddURL(u)
	for _, c := range []struct{ in, want string }{
		{"unauthorized: Bearer tok-12345678", "unauthorized: [redacted]"},
		{"token tok-12345678 alone", "token [redacted] alone"},
		{"abc is not a secret", "abc is not a secret"},
		{"the password pa55w0rd! decoded", "the password [redacted] decoded"},
		{"key k3y-value/x", "key [redacted]"},
		{"pw hunter2-secret", "pw [redacted]"},
		{`see http://bob:own-pass@other/x?sig=abc#frag, then`, `see http://[redacted]@other/x?[redacted]#[redacted] then`},
	} {
		if got := s.String(c.in); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestReader(t *testing.T) {
	s := New("Bearer tok/12345678")
	for _, c := range []struct{ in, want string }{
		{"unauthorized: Bearer tok/12345678\n", "unauthorized: [redacted]\n"},
		{`{"m":"Bearer tok\/12345678"}`, `{"m":"[redacted]"}`},
		{"/loop/Bearer%20tok%2F12345678/x", "/loop/[redacted]/x"},
		{"tok/1234567", "tok/1234567"}, // a prefix at the very end is released at EOF
		{"ends in %2", "ends in %2"},
	} {
		for name, wrap := range map[string]func(io.Reader) io.Reader{
			"whole": func(r io.Reader) io.Reader { return r }, "byte by byte": iotest.OneByteReader,
		} {
			got, err := io.ReadAll(s.Reader(io.NopCloser(wrap(strings.NewReader(c.in)))))
			if err != nil || string(got) != c.want {
				t.Errorf("%s %q: got %q, %v; want %q", name, c.in, got, err, c.want)
			}
		}
	}
}

// An SSE event ends in a blank line, which cannot start a secret: it is released at once, not
// held back until the next event arrives.
func TestReaderHoldsNoEventBack(t *testing.T) {
	pr, pw := io.Pipe()
	b := New("Bearer tok-12345678").Reader(pr)
	go func() { _, _ = io.WriteString(pw, "data: {}\n\n") }() // and nothing more
	buf := make([]byte, 64)
	n, err := io.ReadAtLeast(b, buf, len("data: {}\n\n"))
	if err != nil || string(buf[:n]) != "data: {}\n\n" {
		t.Fatalf("got %q, %v", buf[:n], err)
	}
	pw.Close()
}

func TestValue(t *testing.T) {
	type inner struct {
		Notes []string
		M     map[string]string
		Any   any
		Raw   []byte
	}
	v := struct {
		Err string
		In  *inner
		Arr [1]string
	}{"x tok-12345678", &inner{[]string{"a tok-12345678"}, map[string]string{"tok-12345678": "v tok-12345678"}, "tok-12345678", []byte("tok-12345678")}, [1]string{"tok-12345678"}}
	New("tok-12345678").Value(&v)
	if v.Err != "x [redacted]" || v.In.Notes[0] != "a [redacted]" || v.In.M[Mark] != "v [redacted]" || len(v.In.M) != 1 ||
		v.In.Any != Mark || string(v.In.Raw) != Mark || v.Arr[0] != Mark {
		t.Errorf("%+v %+v", v, *v.In)
	}
}

func TestError(t *testing.T) {
	inner := &url.Error{Op: "Get", URL: "http://h/", Err: errors.New("tok-12345678")}
	err := New("tok-12345678").Error(inner)
	var ue *url.Error
	if err.Error() != `Get "http://h/": [redacted]` || !errors.As(err, &ue) {
		t.Errorf("%v", err)
	}
}

func TestURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://h:1/mcp", "http://h:1/mcp"},
		{"http://u:p@h/mcp?key=1#f", "http://[redacted]@h/mcp?[redacted]#[redacted]"},
		{"http://user:pa/ss123456@127.0.0.1:1/mcp", "http://[redacted]@127.0.0.1:1/mcp"},
		{"http://h:8x/?k=v", "http://h:8x/?[redacted]"},
	} {
		if got := URLString(c.in); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

// A password holding a '/' makes url.Parse read the rest as a port and quote it: ParseURL
// says why from the URL without its user-info.
func TestParseURLHidesCredentials(t *testing.T) {
	for _, raw := range []string{"http://user:pa/ss123456@127.0.0.1:1/mcp", "http://user:pa/ss123456@127.0.0.1:8x/", "http://u:p%zzass@h/"} {
		_, err := ParseURL(raw)
		if err == nil {
			t.Fatalf("%q parsed", raw)
		}
		if strings.Contains(err.Error(), "pa/") || strings.Contains(err.Error(), ":pa") || strings.Contains(err.Error(), "ss123456") {
			t.Errorf("%q: %v", raw, err)
		}
		t.Log(err)
	}
}

// Two layers of encoding are matched in one pass: an escape whose own bytes are escaped
// again, and base64 of an escaped secret.
func TestNestedEncodings(t *testing.T) {
	secret := `tok/en+wi=th%"\x1234`
	s := New(secret)
	pct := pctAll(secret, "%%%02X")
	for name, enc := range map[string]string{
		"percent of percent":     strings.ReplaceAll(pct, "%", "%25"),
		"json \\u of percent":    strings.ReplaceAll(pct, "%", `\u0025`),
		"percent, bytes escaped": strings.ReplaceAll(pctAll(pct, "%%%02x"), "%25", "%25"),
		"json of PHP json":       `tok\\/en+wi=th%\\\"\\\\x1234`,
		"base64 of percent":      base64.StdEncoding.EncodeToString([]byte(pct)),
		"base64url of json":      base64.URLEncoding.EncodeToString([]byte(`tok\/en+wi=th%\"\\x1234`)),
		"percent of json \\u":    strings.ReplaceAll(uEscape(secret), `\`, "%5C"),
	} {
		got := s.String("a " + enc + " b")
		if got != "a "+Mark+" b" {
			t.Errorf("%s: %q became %q", name, enc, got)
		}
	}
}

// Out redacts the values it is given, the fields of every typed error in the chain (an error
// field's text included), and the error's text; errors.As still finds the typed errors.
func TestOut(t *testing.T) {
	ce := &causeError{Reason: "saw tok-12345678", Err: errors.New("inner tok-12345678")}
	le := &listError{Problems: []string{"p tok-12345678"}}
	wrapped := fmt.Errorf("run: %w", errors.Join(ce, le))
	export := &struct{ Notes []string }{[]string{"n tok-12345678"}}
	err := New("tok-12345678").Out(wrapped, export)
	if strings.Contains(err.Error(), "tok-") || export.Notes[0] != "n "+Mark || ce.Reason != "saw "+Mark || ce.Err.Error() != "inner "+Mark || le.Problems[0] != "p "+Mark {
		t.Errorf("%v; %+v %+v %+v", err, export, ce, le)
	}
	var got *listError
	if !errors.As(err, &got) || got != le {
		t.Errorf("errors.As lost the typed error")
	}
}

type causeError struct {
	Reason string
	Err    error
}

func (e *causeError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *causeError) Unwrap() error { return e.Err }

type listError struct{ Problems []string }

func (e *listError) Error() string { return strings.Join(e.Problems, "; ") }

// A secret that starts with a byte that is not UTF-8 is also matched as encoding/json wrote it
// (U+FFFD, as its bytes), past the two-byte start lookup.
func TestInvalidUTF8Start(t *testing.T) {
	secret := "\xffsecret-tail-12345"
	s := New(secret)
	for _, text := range []string{"a " + secret + " b", "a \uFFFDsecret-tail-12345 b", `a \ufffdsecret-tail-12345 b`} {
		if got := s.String(text); got != "a "+Mark+" b" {
			t.Errorf("%q became %q", text, got)
		}
	}
}
