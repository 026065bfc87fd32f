package wire

import (
	"errors"
	"net"
	"testing"
)

// Names under .invalid are refused without a DNS query (RFC 6761); other names are left alone.
func TestInvalidName(t *testing.T) {
	for _, addr := range []string{"x.invalid:80", "A.B.INVALID.:443", "invalid:80"} {
		var de *net.DNSError
		if err := invalidName("tcp", addr); !errors.As(err, &de) || !de.IsNotFound {
			t.Errorf("%s: %v, want a not-found DNS error", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:80", "example.com:443", "invalid.example:80", "[::1]:80"} {
		if err := invalidName("tcp", addr); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}
