package refserver

import "testing"

// The line serve prints is the line bench and --procs read: every shape it takes gives its
// URL, and anything else is refused, never read for a URL by position.
func TestParseReadyLine(t *testing.T) {
	for _, c := range []struct{ line, url string }{
		{ReadyPrefix + "http://127.0.0.1:41234/mcp (ttl 5m0s, retention 1m0s, GET validation strict); Ctrl-C stops it\n", "http://127.0.0.1:41234/mcp"},
		{ReadyPrefix + "http://[::1]:8080/mcp\n", "http://[::1]:8080/mcp"},
		{"", ""},
		{"listening on http://127.0.0.1:1/mcp\n", ""},
		{ReadyPrefix + "\n", ""},
		{ReadyPrefix + "127.0.0.1:8080 (ttl never)\n", ""},
	} {
		url, err := ParseReadyLine(c.line)
		if url != c.url || (err == nil) != (c.url != "") {
			t.Errorf("ParseReadyLine(%q) = %q, %v; want %q", c.line, url, err, c.url)
		}
	}
}
