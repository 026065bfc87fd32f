package inspect

import (
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// Advice is what a run takes from a fingerprint (run --from-inspect) for every group: the
// tool whose replies gave the cursors, the probe and the dead statuses of the verdict, and how
// the server's TTL counts.
type Advice struct {
	Tool         string // "" when no tool call gave a cursor
	Probe        string // "" when neither probe is valid
	DeadStatuses []int
	// TTLMode is "sliding" or "absolute"; "" when inspect could not tell (it needs --ttl) or
	// found a mode this tool does not know: the workload's stands.
	TTLMode string
}

// Advice is fp's advice to a run.
func (fp *Fingerprint) Advice() Advice {
	a := Advice{Probe: fp.Verdict.Probe, DeadStatuses: fp.Verdict.DeadStatuses}
	if t, ok := strings.CutPrefix(fp.CursorVia, "a tools/call "); ok {
		a.Tool, _, _ = strings.Cut(t, " reply")
	}
	if slices.Contains(vocab.TTLModes(), fp.TTLMode) {
		a.TTLMode = fp.TTLMode
	}
	return a
}
