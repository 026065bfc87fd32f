package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// userinfoChars are what a URL's user-info may carry (RFC 3986: unreserved, sub-delims, ':'),
// and what users paste there anyway: '#', '?', '/', '@', a '%' that escapes nothing.
const userinfoChars = "abcXYZ019-._~!$&'()*+,;=:#?/@%"

// A password (and a user name) is never shown, whatever characters it holds, raw or
// percent-encoded: not by URLString, not in ParseURL's error, not in a text (String).
func FuzzURLCredentials(f *testing.F) {
	for _, c := range []struct{ user, pass string }{
		{"usr", "LongS3cretPrefix#x"}, {"usr", "pa?ss"}, {"usr", "1234?x"}, {"usr", "12/ss#x"},
		{"u", "pa'ss"}, {"u@x", "p@ss"}, {"u", "%zz"}, {"u", "%23%3F%2F"}, {"", "only#pw"}, {"u:v", "w"},
	} {
		f.Add(c.user, c.pass, "127.0.0.1:8080", "/mcp?k=v")
	}
	r := rand.New(rand.NewPCG(30, 2))
	for range 200 {
		f.Add(randomUserinfo(r), randomUserinfo(r), "h.example", "/p")
	}
	f.Fuzz(func(t *testing.T, user, pass, host, rest string) {
		if strings.ContainsAny(user+pass+host+rest, " \t\r\n\"<>`\\") || strings.Contains(host+rest, "@") || len(user+pass) > 200 {
			t.Skip() // not one URL token; an '@' past the credentials is another test
		}
		u, p := "Us7"+user+"Ue8", "Pa1"+pass[:len(pass)/2]+"Pb2"+pass[len(pass)/2:]+"Pc3"
		raw := fmt.Sprintf("http://%s:%s@%s%s", u, p, host, rest)
		outs := map[string]string{"URLString": URLString(raw), "String": (*Set)(nil).String("see " + raw + ", then")}
		if _, err := ParseURL(raw); err != nil {
			outs["ParseURL"] = err.Error()
		}
		for name, out := range outs {
			for _, s := range []string{"Us7", "Ue8", "Pa1", "Pb2", "Pc3"} {
				if strings.Contains(out, s) {
					t.Fatalf("%s(%q) shows %s: %q", name, raw, s, out)
				}
			}
		}
	})
}

func randomUserinfo(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(12) {
		if r.IntN(5) == 0 {
			fmt.Fprintf(&b, "%%%02X", r.IntN(256))
			continue
		}
		b.WriteByte(userinfoChars[r.IntN(len(userinfoChars))])
	}
	return b.String()
}
