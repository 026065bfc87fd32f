package results

import "fmt"

// Part is one export read from a file, with the file it came from (for messages and the
// record): the unit both results/merge (shards of one run) and results/compare (baselines and
// the current run) take.
type Part struct {
	File   string
	Export *Export
}

// MismatchError refuses to combine exports that do not belong together: shards of different
// workloads, duplicate or missing shard numbers, runs of different workloads in compare.
type MismatchError struct{ Msg string }

func (e *MismatchError) Error() string { return e.Msg }

// Mismatchf is a MismatchError with a formatted message.
func Mismatchf(format string, args ...any) error {
	return &MismatchError{Msg: fmt.Sprintf(format, args...)}
}

// ShortHash is a workload hash cut for a message: the algorithm and the first hex digits.
func ShortHash(h string) string {
	if len(h) > 19 {
		return h[:19] + "…"
	}
	return h
}
