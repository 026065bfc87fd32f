package generator

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Part is one shard's generator section, for Combine.
type Part struct {
	Report *Report
	// OffsetS is where the shard's run started, in seconds after the merged run's start
	// (shards share a start time; one that joined late starts later).
	OffsetS float64
}

// Combine is the generator section of shards merged into one run (nil when no shard had one).
// The run is one stretch of time on one or more machines, so:
//   - starved windows are the union over time of the shards' (aligned on the run's start),
//     and starved_s their length: twelve shards starved in the same second starved the run
//     for one second, not twelve; the run is starved when that union passes Bound.RunShare of
//     its time, or when any shard was (its figures are in the merge);
//   - CPUs are counted once per machine (shards of one machine share its cores), CPU seconds
//     and the run-queue wait add up, and the shares are of those sums;
//   - timer lag and scheduler latency keep the worst shard's figures (their histograms are
//     not exported); turn and dispatch lag are the merged histograms' (the caller sets them);
//   - windows is the most any shard judged.
func Combine(parts []Part) *Report {
	var rs []Part
	for _, p := range parts {
		if p.Report != nil {
			rs = append(rs, p)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	out := &Report{Bound: rs[0].Report.Bound, Machine: rs[0].Report.Machine, Shards: len(rs)}
	cpus := map[string]int{}
	var wait, run float64
	hasWait := false
	var starving []Window
	for i, p := range rs {
		r := p.Report
		out.Seconds = max(out.Seconds, p.OffsetS+r.Seconds)
		key := r.Machine
		if key == "" || key != out.Machine {
			out.Machine = "" // more than one machine (or one not named): none
		}
		if key == "" {
			key = "#" + strconv.Itoa(i) // unnamed: a machine of its own
		}
		cpus[key] = max(cpus[key], r.CPUs)
		out.CPUSeconds += r.CPUSeconds
		if w, ok := waitSeconds(r); ok {
			wait, run, hasWait = wait+w, run+r.CPUSeconds, true
		}
		out.TimerLag, out.SchedLatency = worst(out.TimerLag, r.TimerLag), worst(out.SchedLatency, r.SchedLatency)
		out.TurnLag, out.DispatchLag = worst(out.TurnLag, r.TurnLag), worst(out.DispatchLag, r.DispatchLag)
		out.GCPauses = GCPauses{Count: out.GCPauses.Count + r.GCPauses.Count, TotalUS: out.GCPauses.TotalUS + r.GCPauses.TotalUS, MaxUS: max(out.GCPauses.MaxUS, r.GCPauses.MaxUS)}
		out.Windows = max(out.Windows, r.Windows)
		if r.Starved {
			out.StarvedShards++
		}
		for _, w := range r.Starving {
			starving = append(starving, Window{FromS: w.FromS + p.OffsetS, ToS: w.ToS + p.OffsetS, Why: w.Why})
		}
	}
	for _, n := range cpus {
		out.CPUs += n
	}
	if out.Seconds > 0 && out.CPUs > 0 {
		out.CPUShare = out.CPUSeconds / (out.Seconds * float64(out.CPUs))
	}
	if hasWait && wait+run > 0 {
		share, w := wait/(wait+run), wait
		out.CPUWaitShare, out.CPUWaitS = &share, &w
	}
	out.Starving = union(starving)
	for _, w := range out.Starving {
		out.StarvedS += w.ToS - w.FromS
	}
	out.Starved = out.StarvedShards > 0 || out.StarvedS > Bound.RunShare*out.Seconds
	return out
}

// waitSeconds is a report's run-queue wait in seconds: as recorded, or for an export that
// recorded only the share, from the share and the CPU time (the time on a CPU is the rest).
func waitSeconds(r *Report) (float64, bool) {
	switch {
	case r.CPUWaitS != nil:
		return *r.CPUWaitS, true
	case r.CPUWaitShare != nil && *r.CPUWaitShare < 1:
		return *r.CPUWaitShare / (1 - *r.CPUWaitShare) * r.CPUSeconds, true
	}
	return 0, false
}

// union merges overlapping windows into stretches, in order; a stretch keeps the reason of
// its earliest window.
func union(ws []Window) []Window {
	slices.SortStableFunc(ws, func(a, b Window) int { return cmp.Compare(a.FromS, b.FromS) })
	var out []Window
	for _, w := range ws {
		if n := len(out); n > 0 && w.FromS <= out[n-1].ToS {
			out[n-1].ToS = max(out[n-1].ToS, w.ToS)
			continue
		}
		out = append(out, w)
	}
	return out
}

// worst keeps the larger of each figure, the counts summed.
func worst(a, b Dist) Dist {
	return Dist{Count: a.Count + b.Count, P50US: max(a.P50US, b.P50US), P99US: max(a.P99US, b.P99US), MaxUS: max(a.MaxUS, b.MaxUS)}
}

// machine names this machine without saying anything about it: a hash of the kernel's boot
// id (shared by every process and container of one running kernel, and so of one set of
// cores), else of the host name; "" when neither can be read.
func machine() string {
	id, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil || len(strings.TrimSpace(string(id))) == 0 {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return ""
		}
		id = []byte("host:" + h)
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(string(id))))
	return hex.EncodeToString(sum[:6])
}
