package merge

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/results"
)

// mergeSessionLeak adds a shard's check to the merge's: each shard runs its own reference
// server, so the merged check holds what the shards' servers held and their clients held, and
// passes only if every shard's passed. nil when no shard had one.
func mergeSessionLeak(into *results.SessionLeak, shard int, from *results.SessionLeak) *results.SessionLeak {
	if from == nil {
		return into
	}
	line := fmt.Sprintf("shard %d: %s", shard, from.Verdict)
	if into == nil {
		c := *from
		c.Verdict = line
		return &c
	}
	into.Judged = into.Judged && from.Judged
	into.Pass = into.Pass && from.Pass
	into.Held += from.Held
	into.Live += from.Live
	into.AtSeconds = max(into.AtSeconds, from.AtSeconds)
	into.Opened += from.Opened
	into.Deleted += from.Deleted
	into.Expired += from.Expired
	into.Refused += from.Refused
	into.Verdict += "; " + line
	return into
}
