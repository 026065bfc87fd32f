package workloads

import (
	"strings"
	"testing"
)

// Valid YAML 1.2 is accepted: a byte-order mark, a %YAML directive, explicit "? key" entries.
func TestValidYAMLAccepted(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"byte-order mark", "\ufeff" + base},
		{"YAML 1.2 directive", "%YAML 1.2\n---\n" + base},
		{"explicit keys", strings.Replace(base, "name: t\n", "? name\n: t\n", 1)},
		{"explicit keys in a group", strings.Replace(base, "    clients: 1\n", "    ? clients\n    : 1\n", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Parse("v.yaml", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if w.Name != "t" || len(w.Groups) != 1 || w.Groups[0].Clients != 1 {
				t.Errorf("decoded %+v", w)
			}
		})
	}
}

// validate finds what run would refuse, positioned: ports outside 1-65535 and URLs carrying
// credentials, which are never echoed.
func TestURLsCheckedAsRunWould(t *testing.T) {
	for _, tc := range []struct{ old, new, want string }{
		{"https://localhost:8443/mcp", "https://localhost:0/mcp", `u.yaml:3:8: target.url: "https://localhost:0/mcp": port 0 is not a TCP port`},
		{"https://localhost:8443/mcp", "https://localhost:99999/mcp", `u.yaml:3:8: target.url: "https://localhost:99999/mcp": port 99999 is not a TCP port`},
		{"http://127.0.0.1:8474", "http://127.0.0.1:0", `u.yaml:9:12: toxiproxy: "http://127.0.0.1:0": port 0 is not a TCP port`},
		{"http://127.0.0.1:8474", "http://user:s3cr3t-t0ken@127.0.0.1:8474", `u.yaml:9:12: toxiproxy: carries credentials`},
		{"http://127.0.0.1:8474", "http://user:s3cr3t-t0ken@127.0.0.1:99999", `u.yaml:9:12: toxiproxy: carries credentials`},
		{"http://127.0.0.1:8474", "http://user:s3cr3t-t0ken@127.0.0.1:8x/", `u.yaml:9:12: toxiproxy: "http://[redacted]@127.0.0.1:8x/" is not a URL`},
		{"https://localhost:8443/mcp", "ftp://s3cr3t-t0ken@localhost/mcp", `u.yaml:3:8: target.url: carries credentials`},
		// a password with a '/': url.Parse reads "s3cr3t" as a port and quotes it
		{"http://127.0.0.1:8474", "http://user:s3cr3t/t0ken@127.0.0.1:8474", `u.yaml:9:12: toxiproxy: "http://[redacted]@127.0.0.1:8474" is not a URL`},
		{"https://localhost:8443/mcp", "https://user:s3cr3t/t0ken@localhost:8443/mcp?key=s3cr3t-k3y", `u.yaml:3:8: target.url: "https://[redacted]@localhost:8443/mcp?[redacted]" is not a URL`},
	} {
		_, err := Parse("u.yaml", []byte(strings.Replace(urlBase, tc.old, tc.new, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s", tc.new, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the credential is echoed: %v", tc.new, err)
		}
	}
}
