package refserver

import (
	"fmt"
	"strings"
)

// ReadyPrefix begins the line `mcpchaos serve` prints on its stdout once it listens: the URL it
// serves at follows, then its regime in words. A process that starts a server of its own
// (bench, run --procs) reads the URL back with ParseReadyLine: the line is written and read
// through these two only.
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
