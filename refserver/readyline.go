package refserver

import (
	"fmt"
	"strings"
	"time"
)

// ReadyPrefix begins the line `mcpchaos serve` prints on its stdout once it listens (ReadyLine):
// the URL it serves at follows, then its regime in words. A process that starts a server of
// its own (bench, run --procs) reads the URL back with ParseReadyLine: the line is written and
// read through these two only.
const ReadyPrefix = "mcpchaos reference server on "

// ParseReadyLine returns the URL a server's ready line names, or an error quoting the line.
func ParseReadyLine(line string) (string, error) {
	rest, ok := strings.CutPrefix(line, ReadyPrefix)
	url, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if !ok || !strings.HasPrefix(url, "http://") {
		return "", fmt.Errorf("not a reference server's ready line (%q...): %q", ReadyPrefix, line)
	}
	return url, nil
}

// ReadyLine is the line `mcpchaos serve` prints once the server for cfg listens at url, without
// its newline.
func ReadyLine(url string, cfg Config) string {
	return fmt.Sprintf(ReadyPrefix+"%s (ttl %s, retention %s, GET validation %s); Ctrl-C stops it",
		url, orNever(cfg.SessionTTL, "sessions never expire"), orNever(cfg.Retention, "no time limit"), cfg.GetValidation)
}

// MetricsLine is the line under it: where the metrics are (addr is the instance's), and the
// session cap and the leak when set; without its newline.
func MetricsLine(addr string, cfg Config) string {
	s := fmt.Sprintf("  metrics at http://%s%s", addr, MetricsPath)
	if cfg.MaxSessions > 0 {
		s += fmt.Sprintf("; at most %d sessions held (503 beyond)", cfg.MaxSessions)
	}
	if cfg.Leak {
		s += "; LEAKING: dead sessions are never reclaimed"
	}
	return s
}

// orNever writes a duration, or what its zero means.
func orNever(d time.Duration, zero string) string {
	if d == 0 {
		return zero
	}
	return d.String()
}
