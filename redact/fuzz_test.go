package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

// FuzzRedact: for any secret and any text embedding it in any supported encoding, the
// redacted text holds none of the secret's encodings (Encodings), and redacting it again
// changes nothing that was not already a mark.
func FuzzRedact(f *testing.F) {
	f.Add("Zm9vYmFy/YmF6+cXV4aGVsbG8=", "error: ", " at /mcp", 0, 1)
	f.Add(`tok"en\wi th%/+=`, `{"message":"`, `"}`, 2, 0)
	f.Add("Bearer s3cr3t/t0ken+4242==", "/loop/", "/x", 5, 2)
	f.Add("päss/wörd+€😀xx", "<p>", "</p>", 9, 1)
	f.Add("admin:pa55w0rd!", "Basic ", "", 12, 0)
	f.Fuzz(func(t *testing.T, secret, before, after string, which, align int) {
		if len(secret) < MinLen || len(secret) > 200 || len(before)+len(after) > 1000 {
			t.Skip()
		}
		encs := Encodings(secret)
		names := sortedKeys(encs)
		name := names[uint(which)%uint(len(names))]
		var embedded string
		if align != 0 { // the secret inside a longer base64 text, at one of three alignments
			pad := strings.Repeat("x", int(uint(align)%3))
			name = "base64 of a text holding it"
			embedded = base64.StdEncoding.EncodeToString([]byte(pad + before + secret + after))
		} else {
			embedded = before + encs[name] + after
		}
		got := New(secret).String(embedded)
		for n, e := range encs {
			if strings.Contains(got, e) {
				t.Fatalf("%s of %q found after redacting %q (embedded as %s): %q", n, secret, embedded, name, got)
			}
		}
		if align != 0 && !strings.Contains(got, Mark) {
			t.Fatalf("%q: nothing cut from %q", secret, embedded)
		}
	})
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out { // insertion sort: a handful of names
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
