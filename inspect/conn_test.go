package inspect

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Access: headers parsed and expanded from the environment, an unset variable refused, the CA
// file read (a file without certificates refused) and never beside --insecure-skip-verify.
func TestAccessConn(t *testing.T) {
	u, _ := url.Parse("https://127.0.0.1:9/mcp")
	t.Setenv("MCPCHAOS_TEST_TOKEN", "s3cret")
	c, err := Access{HTTP2: true, Headers: []string{"Authorization: Bearer ${MCPCHAOS_TEST_TOKEN}"}}.Conn(u)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Header.Get("Authorization"); got != "Bearer s3cret" || !c.HTTP2 || c.URL != u {
		t.Errorf("Conn: header %q, http2 %v", got, c.HTTP2)
	}
	bad := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bad, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		a    Access
		want string
	}{
		{Access{CAFile: bad, InsecureSkipVerify: true}, "exclude each other"},
		{Access{CAFile: bad}, "--ca-file: "},
		{Access{Headers: []string{"no colon"}}, "--header: "},
		{Access{Headers: []string{"X-Key: ${MCPCHAOS_TEST_UNSET_VARIABLE}"}}, "MCPCHAOS_TEST_UNSET_VARIABLE"},
	} {
		if _, err := tc.a.Conn(u); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.a, err, tc.want)
		}
	}
}

// --tool-args: a JSON object, and only with --tool.
func TestParseToolArgs(t *testing.T) {
	if m, err := ParseToolArgs("echo", `{"text":"hi"}`); err != nil || m["text"] != "hi" {
		t.Errorf("got %v, %v", m, err)
	}
	if m, err := ParseToolArgs("", ""); m != nil || err != nil {
		t.Errorf("none: %v, %v", m, err)
	}
	for _, tc := range [][2]string{{"", `{"a":1}`}, {"echo", "[1]"}, {"echo", "null"}} {
		if _, err := ParseToolArgs(tc[0], tc[1]); err == nil {
			t.Errorf("%q %q passed", tc[0], tc[1])
		}
	}
}
