package merge

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/results"
)

// Options adjusts Merge.
type Options struct {
	// AllowPartial merges the shards given even when some of 0..n-1 are missing.
	AllowPartial bool
}

// Merge combines the exports of the shards of one run into the export of the whole run,
// exactly: counters and error counts are summed, histograms are merged from their HDR
// encodings (so percentiles are those of one histogram holding every sample, never an
// average of percentiles), timelines are aligned on wall-clock time, and the thresholds are
// judged again on the merged numbers. It refuses shards of different workloads, of different
// shard counts, exports that are not shards, duplicate shard numbers and (unless
// AllowPartial) missing ones, with a *MismatchError.
func Merge(parts []results.Part, opts Options) (*results.Export, error) {
	if err := checkShards(parts, opts); err != nil {
		return nil, err
	}
	parts = slices.Clone(parts)
	slices.SortFunc(parts, func(a, b results.Part) int { return cmp.Compare(a.Export.Run.Shard.Index, b.Export.Run.Shard.Index) })

	e := &results.Export{SchemaVersion: results.SchemaVersion, Run: mergeRun(parts)}
	for i := range parts[0].Export.Groups { // every shard has the same groups (checkShards)
		gs := make([]*results.Group, len(parts))
		for j, p := range parts {
			gs[j] = &p.Export.Groups[i]
		}
		g, err := results.Total(gs[0].Name, gs)
		if err != nil {
			return nil, err
		}
		e.Groups = append(e.Groups, g)
	}
	if err := e.Tally(); err != nil {
		return nil, err
	}
	e.Faults = mergeFaults(parts, e.Run.Start)
	e.Phases = mergePhases(parts, e.Run.Start)
	e.Timeline = mergeTimelines(parts, e.Run.Start)
	e.Actions = mergeActions(parts, e.Run.Start)
	e.SteadyState, e.Rollbacks = mergeSteady(parts, e.Run.Start) // steady_merge.go
	e.Generator = mergeGenerator(parts, e)                       // merge_generator.go
	e.Attribute()                                                // whose errors: on the merged timeline and starved windows
	var note string
	if e.Topology, note = mergeTopology(parts); note != "" {
		e.Run.Notes = append(e.Run.Notes, note)
	}

	if err := judgeAgain(e, parts); err != nil {
		return nil, err
	}
	return e, nil
}

// checkShards refuses parts that are not every shard (or, with AllowPartial, some shards) of
// one run, with a *MismatchError saying which file and what to give instead.
func checkShards(parts []results.Part, opts Options) error {
	if len(parts) == 0 {
		return results.Mismatchf("no shards to merge; give the shards' JSON exports (or a directory holding them)")
	}
	first := parts[0]
	for _, p := range parts {
		if p.Export.Run.Shard == nil {
			return results.Mismatchf("%s is not a shard (it was run without --shard%s); merge combines the shards of one sharded run",
				p.File, map[bool]string{true: ", and is itself a merge", false: ""}[len(p.Export.Run.MergedShards) > 0])
		}
	}
	n := first.Export.Run.Shard.Count
	byIndex := map[int]string{}
	for _, p := range parts {
		r, fr := p.Export.Run, first.Export.Run
		switch {
		case r.Workload != fr.Workload:
			return results.Mismatchf("%s is a shard of workload %q but %s is of %q; merge only the shards of one run", p.File, r.Workload, first.File, fr.Workload)
		case r.WorkloadHash != fr.WorkloadHash:
			return results.Mismatchf("%s and %s both ran workload %q but from different files (%s, %s); every shard must run the same workload file",
				first.File, p.File, r.Workload, results.ShortHash(fr.WorkloadHash), results.ShortHash(r.WorkloadHash))
		case r.Shard.Count != n:
			return results.Mismatchf("%s is shard %s but %s is shard %s: the shard counts differ; merge only the shards of one run", p.File, r.Shard, first.File, fr.Shard)
		}
		if prev, dup := byIndex[r.Shard.Index]; dup {
			return results.Mismatchf("shard %d appears twice: %s and %s; give each shard once", r.Shard.Index, prev, p.File)
		}
		byIndex[r.Shard.Index] = p.File
		if !sameGroups(p.Export, first.Export) {
			return results.Mismatchf("%s and %s have different client groups; they are not shards of one run", first.File, p.File)
		}
	}
	if missing := missingShards(byIndex, n); len(missing) > 0 && !opts.AllowPartial {
		return results.Mismatchf("shard(s) %s of 0..%d are missing; merge all %d shards, or pass --allow-partial to merge only these", joinInts(missing), n-1, n)
	}
	return nil
}

// judgeAgain judges every threshold any shard recorded on the merged numbers; one that
// aborted a shard is marked as having aborted the run.
func judgeAgain(e *results.Export, parts []results.Part) error {
	var exprs []results.ThresholdResult
	aborted := map[string]bool{}
	seen := map[string]bool{}
	for _, p := range parts {
		for _, r := range p.Export.Thresholds {
			if r.AbortedRun {
				aborted[r.Expr] = true
			}
			if !seen[r.Expr] {
				seen[r.Expr] = true
				exprs = append(exprs, r)
			}
		}
	}
	ths, err := results.ParseThresholds(exprs)
	if err != nil {
		return fmt.Errorf("the shards record a threshold this mcpchaos cannot read: %w", err)
	}
	e.Thresholds = results.Judge(e, ths)
	for i := range e.Thresholds {
		e.Thresholds[i].AbortedRun = aborted[e.Thresholds[i].Expr]
	}
	return nil
}

func sameGroups(a, b *results.Export) bool {
	if len(a.Groups) != len(b.Groups) {
		return false
	}
	for i := range a.Groups {
		if a.Groups[i].Name != b.Groups[i].Name {
			return false
		}
	}
	return true
}

func missingShards(have map[int]string, n int) []int {
	var missing []int
	for i := range n {
		if _, ok := have[i]; !ok {
			missing = append(missing, i)
		}
	}
	return missing
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// mergeTargets names the shards' targets, each once in shard order: one URL, or several when
// a sharded run served the built-in target from several processes (shards.ServersFor).
func mergeTargets(parts []results.Part) string {
	var ts []string
	for _, p := range parts {
		if t := p.Export.Run.Target; !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	return strings.Join(ts, ", ")
}

// mergeRun is the merged run's metadata: the earliest start and latest end, every shard's
// notes, labels and proxies, their problems by shard, and each shard's record in MergedShards.
func mergeRun(parts []results.Part) results.Run {
	f := parts[0].Export.Run
	r := results.Run{
		ID:             mergeRunID(parts),
		Tool:           f.Tool,
		ToolVersion:    f.ToolVersion,
		Workload:       f.Workload,
		WorkloadSource: f.WorkloadSource,
		WorkloadHash:   f.WorkloadHash,
		Target:         mergeTargets(parts),
		Start:          f.Start,
		End:            f.End,
		PlannedSeconds: f.PlannedSeconds,
		Generation:     f.Generation,
		// The shards ran one workload against one target: they measured the same generation.
		OtherGeneration: f.OtherGeneration,
	}
	seenNote := map[string]bool{}
	var aborted, errs, labelsDiffer, protocols []string
	for _, p := range parts {
		s := p.Export.Run
		if s.Start.Before(r.Start) {
			r.Start = s.Start
		}
		if s.End.After(r.End) {
			r.End = s.End
		}
		if s.ToolVersion != r.ToolVersion {
			r.ToolVersion = "mixed"
		}
		if r.NegotiatedProtocol == "" {
			r.NegotiatedProtocol = s.NegotiatedProtocol
		}
		for _, n := range s.Notes {
			if !seenNote[n] {
				seenNote[n] = true
				r.Notes = append(r.Notes, n)
			}
		}
		for _, f := range s.Findings { // a finding of any shard is the run's
			if !slices.Contains(r.Findings, f) {
				r.Findings = append(r.Findings, f)
			}
		}
		r.NotObservable = mergeNotObservable(r.NotObservable, s.NotObservable)
		r.Libraries = mergeLibraries(r.Libraries, s.Libraries)
		r.SessionLeak = mergeSessionLeak(r.SessionLeak, s.Shard.Index, s.SessionLeak) // sessionleak.go
		for g, ms := range s.Withheld {
			for m, why := range ms {
				r.Withhold(g, why, m)
			}
		}
		// The shards of one run carry the same labels; a shard's own are kept too, and a label
		// the shards disagree on keeps every value and is noted. Each shard has its own proxies.
		var differ []string
		r.Labels, differ = mergeStrings(r.Labels, s.Labels)
		for _, k := range differ {
			if !slices.Contains(labelsDiffer, k) {
				labelsDiffer = append(labelsDiffer, k)
			}
		}
		r.Proxies, _ = mergeStrings(r.Proxies, s.Proxies)
		if s.NegotiatedProtocol != "" && s.NegotiatedProtocol != r.NegotiatedProtocol && !slices.Contains(protocols, s.NegotiatedProtocol) {
			protocols = append(protocols, s.NegotiatedProtocol)
		}
		r.Interrupted = r.Interrupted || s.Interrupted
		r.DetectionDelayEstimated = r.DetectionDelayEstimated || s.DetectionDelayEstimated
		if s.Aborted != "" {
			aborted = append(aborted, fmt.Sprintf("shard %d: %s", s.Shard.Index, s.Aborted))
		}
		if s.Error != "" {
			errs = append(errs, fmt.Sprintf("shard %d: %s", s.Shard.Index, s.Error))
		}
		r.MergedShards = append(r.MergedShards, mergedShard(p))
	}
	r.Notes = append(r.Notes, differNotes(labelsDiffer, r.NegotiatedProtocol, protocols)...)
	r.Aborted = strings.Join(aborted, "; ")
	r.Error = strings.Join(errs, "; ")
	return r
}

// mergeNotObservable adds a shard's metrics that could not be observed, by group, to the
// merge's, each once.
func mergeNotObservable(into, from map[string][]string) map[string][]string {
	for g, ms := range from {
		if into == nil {
			into = map[string][]string{}
		}
		for _, m := range ms {
			if !slices.Contains(into[g], m) {
				into[g] = append(into[g], m)
			}
		}
	}
	return into
}

// mergedShard is the record a merge keeps of one of its shards.
func mergedShard(p results.Part) results.MergedShard {
	s := p.Export.Run
	return results.MergedShard{
		ID: s.ID, Index: s.Shard.Index, Count: s.Shard.Count, File: p.File, ToolVersion: s.ToolVersion,
		Start: s.Start, End: s.End, Interrupted: s.Interrupted, Aborted: s.Aborted, Error: s.Error,
		StartAt: s.Shard.StartAt, LateS: s.Shard.LateS,
	}
}

// mergePhases are the phases of the shard that started first, on the merged clock: shards
// start together (--start-at) and follow one plan, so their phases agree to within their start.
func mergePhases(parts []results.Part, start time.Time) []results.PhaseAt {
	first := parts[0]
	for _, p := range parts {
		if p.Export.Run.Start.Before(first.Export.Run.Start) {
			first = p
		}
	}
	shift := first.Export.Run.Start.Sub(start).Seconds()
	out := make([]results.PhaseAt, 0, len(first.Export.Phases))
	for _, ph := range first.Export.Phases {
		ph.StartS += shift
		ph.EndS += shift
		ph.Turns, ph.CallsNotMade, ph.CallsNotStarted = nil, nil, nil
		for _, p := range parts { // every shard's turns in the phase of that name
			for _, sp := range p.Export.Phases {
				if sp.Phase == ph.Phase {
					ph.Turns = results.AddCounts(ph.Turns, sp.Turns)
					ph.CallsNotMade = results.AddCounts(ph.CallsNotMade, sp.CallsNotMade)
					ph.CallsNotStarted = results.AddCounts(ph.CallsNotStarted, sp.CallsNotStarted)
				}
			}
		}
		out = append(out, ph)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// mergeFaults lists every shard's fault log, with times moved to the merged run's clock.
func mergeFaults(parts []results.Part, start time.Time) []results.FaultAt {
	var out []results.FaultAt
	for _, p := range parts {
		shift := p.Export.Run.Start.Sub(start).Seconds()
		idx := p.Export.Run.Shard.Index
		for _, f := range p.Export.Faults {
			f.AddedAtS += shift
			if f.RemovedAtS != 0 {
				f.RemovedAtS += shift
			}
			f.Shard = &idx
			out = append(out, f)
		}
	}
	return out
}

// mergeTimelines aligns the shards' samples on wall-clock time: each sample goes to the slot
// nearest to its moment on the merged run's clock, and the shards' samples in one slot are
// added up. A shard without a sample in a slot (it started later or ended sooner) adds its
// last running totals of counters and errors there, and no clients.
func mergeTimelines(parts []results.Part, start time.Time) *results.Timeline {
	iv := 0.0
	for _, p := range parts {
		if t := p.Export.Timeline; t != nil {
			iv = math.Max(iv, t.IntervalS)
		}
	}
	if iv == 0 {
		return nil
	}
	type shardSlots struct {
		at          map[int]GroupSampleSet
		first, last int
	}
	var shards []shardSlots
	slotSet := map[int]bool{}
	for _, p := range parts {
		t := p.Export.Timeline
		if t == nil || len(t.Samples) == 0 {
			continue
		}
		s := shardSlots{at: map[int]GroupSampleSet{}, first: math.MaxInt, last: math.MinInt}
		shift := p.Export.Run.Start.Sub(start).Seconds()
		for _, smp := range t.Samples {
			k := int(math.Round((smp.TS + shift) / iv))
			s.at[k] = smp.Groups // a later sample in the same slot wins
			s.first, s.last = min(s.first, k), max(s.last, k)
			slotSet[k] = true
		}
		shards = append(shards, s)
	}
	slots := make([]int, 0, len(slotSet))
	for k := range slotSet {
		slots = append(slots, k)
	}
	sort.Ints(slots)
	out := &results.Timeline{IntervalS: iv}
	prev := make([]GroupSampleSet, len(shards))
	for _, k := range slots {
		smp := results.Sample{TS: float64(k) * iv, Groups: map[string]results.GroupSample{}}
		for i, s := range shards {
			cur, ok := s.at[k]
			switch {
			case ok:
				prev[i] = cur
			case k < s.first:
				continue
			case k > s.last:
				cur = totalsOnly(prev[i])
			default:
				cur = prev[i] // a gap inside the shard's run: hold its last sample
			}
			for name, gs := range cur {
				acc := smp.Groups[name]
				acc.Add(gs)
				smp.Groups[name] = acc
			}
		}
		out.Samples = append(out.Samples, smp)
	}
	return out
}

// GroupSampleSet is every group's sample at one moment.
type GroupSampleSet = map[string]results.GroupSample

func totalsOnly(set GroupSampleSet) GroupSampleSet {
	out := GroupSampleSet{}
	for name, gs := range set {
		out[name] = results.GroupSample{Counters: gs.Counters, Errors: gs.Errors}
	}
	return out
}

// mergeLibraries adds a shard's library groups to the merge's: the first shard's record of a
// group stands, with the error classes of every shard summed.
func mergeLibraries(into, from map[string]results.Library) map[string]results.Library {
	for g, l := range from {
		if into == nil {
			into = map[string]results.Library{}
		}
		cur, ok := into[g]
		if !ok {
			cur = l
			cur.ErrorClasses = nil
		}
		for k, n := range l.ErrorClasses {
			if cur.ErrorClasses == nil {
				cur.ErrorClasses = map[string]int64{}
			}
			cur.ErrorClasses[k] += n
		}
		into[g] = cur
	}
	return into
}
