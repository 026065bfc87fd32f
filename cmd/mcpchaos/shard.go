package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/results"
)

// parseShard reads --shard INDEX/COUNT; INDEX counts from 0, as a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX does. Whether the numbers make a shard is engine.NewPlan's to say.
func parseShard(s string) (*results.Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(strings.TrimSpace(i))
	count, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return nil, usagef("--shard %q: want INDEX/COUNT, e.g. 0/4 for the first of four shards", s)
	}
	return &results.Shard{Index: index, Count: count}, nil // engine.NewPlan checks the range
}

// parseStartAt reads --start-at: an RFC 3339 time, which must be far enough ahead to set up.
// A shard may be given a time already past: its pod was scheduled after the others had
// started, and it joins late rather than failing the whole run (the export says how late).
func parseStartAt(s string, now time.Time, shard bool) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, usagef("--start-at %q: want an RFC 3339 time such as %s", s, now.Add(2*time.Minute).UTC().Format(time.RFC3339))
	}
	if !t.After(now) && !shard {
		return time.Time{}, usagef("--start-at %s is %s in the past; give every shard the same time far enough ahead for all of them to start, e.g. %s",
			s, now.Sub(t).Round(time.Second), now.Add(2*time.Minute).UTC().Format(time.RFC3339))
	}
	return t, nil
}

func describeShard(s *engine.Shard) string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf(", shard %s", s)
}
