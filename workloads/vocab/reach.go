package vocab

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// DefaultProbeTimeout bounds one run of a steady-state probe that names no timeout.
const DefaultProbeTimeout = 5 * time.Second

// AllowedHost says why a probe may not reach rawURL ("" when it may): a network probe goes to
// loopback (127.0.0.0/8, ::1, localhost) or to the target's own host (targetHost, "" for the
// built-in server), as the rest of mcpchaos reaches nothing else.
func AllowedHost(rawURL, targetHost string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return "is not a URL with a host"
	}
	h := strings.ToLower(u.Hostname())
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return ""
	}
	if ip, err := netip.ParseAddr(h); err == nil && ip.IsLoopback() {
		return ""
	}
	if targetHost != "" && strings.EqualFold(h, targetHost) {
		return ""
	}
	if targetHost == "" {
		return fmt.Sprintf("reaches host %s; a probe reaches only loopback (127.0.0.1, ::1, localhost) here: forward the service to a loopback port (e.g. kubectl port-forward) and probe that", h)
	}
	return fmt.Sprintf("reaches host %s; a probe reaches only loopback (127.0.0.1, ::1, localhost) or the target's host %s: forward the service to a loopback port (e.g. kubectl port-forward) and probe that", h, targetHost)
}
