package merge

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/results"
)

// mergeActions lists every shard's actions on the merged run's clock, in the order they
// started, each marked with its shard: each shard carried out its own schedule.
func mergeActions(parts []results.Part, start time.Time) []results.ActionAt {
	var out []results.ActionAt
	for _, p := range parts {
		shift := p.Export.Run.Start.Sub(start).Seconds()
		idx := p.Export.Run.Shard.Index
		for _, a := range p.Export.Actions {
			a.StartedAtS += shift
			a.EndedAtS += shift
			a.Shard = &idx
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b results.ActionAt) int { return cmp.Compare(a.StartedAtS, b.StartedAtS) })
	return out
}

// mergeTopology is the shards' reference-server shape, with their deaths and event-log
// failures added up (by cause, fault and replica). Shards of one run have the same shape; when
// they do not (or only some had a topology), the first shard's is kept and the difference is
// returned as a note, so the merged export does not claim one shape silently.
func mergeTopology(parts []results.Part) (*results.Topology, string) {
	var out *results.Topology
	var shapes []string
	deaths := map[results.DeathsBy]int{} // keyed with Sessions zeroed
	var order []results.DeathsBy
	for _, p := range parts {
		t := p.Export.Topology
		shape := "none"
		if t != nil {
			shape = fmt.Sprintf("%d replicas, routing %s, event log %s", t.Replicas, t.Routing, t.EventLog)
		}
		if !slices.Contains(shapes, shape) {
			shapes = append(shapes, shape)
		}
		if t == nil {
			continue
		}
		if out == nil {
			out = &results.Topology{Replicas: t.Replicas, Routing: t.Routing, EventLog: t.EventLog}
		}
		out.LogErrors += t.LogErrors
		for _, d := range t.Deaths {
			k := d
			k.Sessions = 0
			if _, ok := deaths[k]; !ok {
				order = append(order, k)
			}
			deaths[k] += d.Sessions
		}
	}
	if out == nil {
		return nil, ""
	}
	for _, k := range order {
		k.Sessions = deaths[k]
		out.Deaths = append(out.Deaths, k)
	}
	if len(shapes) > 1 {
		return out, "the shards' reference servers differ (" + strings.Join(shapes, "; ") + "); the topology shown is the first shard's, its deaths are every shard's"
	}
	return out, ""
}

// mergeRunID is the shards' run id when they share one, else an id derived from theirs (the
// same shards always merge to the same id); each shard's own is in MergedShards.
func mergeRunID(parts []results.Part) string {
	ids := make([]string, len(parts))
	for i, p := range parts {
		ids[i] = p.Export.Run.ID
	}
	if same := slices.Compact(slices.Clone(ids)); len(same) == 1 {
		return same[0]
	}
	sum := sha256.Sum256([]byte(strings.Join(ids, "\x00")))
	return hex.EncodeToString(sum[:4])
}

// mergeStrings merges one shard's map of strings (labels, proxies) into into: a key the shards
// disagree on keeps every value, comma-separated, and is returned so that it can be noted.
func mergeStrings(into map[string]string, from map[string]string) (map[string]string, []string) {
	var differ []string
	for _, k := range slices.Sorted(maps.Keys(from)) {
		v := from[k]
		if into == nil {
			into = map[string]string{}
		}
		if old, ok := into[k]; ok && !slices.Contains(strings.Split(old, ","), v) {
			differ = append(differ, k)
			v = old + "," + v
		}
		into[k] = v
	}
	return into, differ
}

// differNotes say what the shards of one run should have agreed on and did not: labels, the
// protocol version negotiated.
func differNotes(labels []string, protocol string, otherProtocols []string) []string {
	var notes []string
	if len(labels) > 0 {
		notes = append(notes, fmt.Sprintf("the shards' labels differ (%s): each such label keeps every shard's value, comma-separated", strings.Join(labels, ", ")))
	}
	if len(otherProtocols) > 0 {
		notes = append(notes, fmt.Sprintf("the shards negotiated different protocol versions: %s (shown), %s", protocol, strings.Join(otherProtocols, ", ")))
	}
	return notes
}
