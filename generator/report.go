package generator

import (
	"fmt"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Limits is the bound past which a window of a run counts as starved: the load generator was
// then late by more than the latencies it measures can bear, so its timing figures from that
// window are its own as much as the server's. A window is starved when any limit is passed.
type Limits struct {
	// TimerLagP99 is how late a 5 ms sleep may wake, at the window's 99th percentile, in µs.
	TimerLagP99 float64
	// SchedP99 is how long a runnable goroutine may wait for a CPU, at the 99th percentile, µs.
	SchedP99 float64
	// CPUWait is the largest share of its runnable time the process's threads may spend
	// waiting in the kernel's run queue (Linux), judged only when the process is busy (uses
	// more than BusyShare of its CPUs): a process that wakes briefly waits for a CPU a large
	// share of a small time, which the timer lag already weighs.
	CPUWait, BusyShare float64
	// RunShare is the share of a run's windows that may be starved before the run is.
	RunShare float64
	// MostShare is the share of a run's time past which it was starved for most of it: its
	// timing figures and the errors of those windows are the runner's, not the server's, and
	// a --procs run says so first and is incomplete (docs/metrics.md, "Generator").
	MostShare float64
}

// Bound is the documented bound (docs/metrics.md, "Generator"): a window is starved when a
// 5 ms sleep woke more than 5 ms late at its p99, a runnable goroutine waited more than 5 ms
// at its p99, or the process, busy on more than a quarter of its CPUs, spent more than half
// of its runnable time waiting for a CPU; a run is starved when more than a tenth of its
// windows were. Measured on this
// project's 2-core CI machine kind: quiet, the timer lag p99 is under 1 ms and the run-queue
// wait under 10%; beside two CPU hogs and a test suite, every window passes at least one limit.
var Bound = Limits{TimerLagP99: 5000, SchedP99: 5000, CPUWait: 0.5, BusyShare: 0.25, RunShare: 0.1, MostShare: 0.5}

// judge says which limit a window passed ("" for none).
func (b Limits) judge(l Live) string {
	var why []string
	if l.TimerLagP99 > b.TimerLagP99 {
		why = append(why, fmt.Sprintf("timer lag p99 %s", fmtUS(l.TimerLagP99)))
	}
	if l.SchedP99 > b.SchedP99 {
		why = append(why, fmt.Sprintf("scheduler latency p99 %s", fmtUS(l.SchedP99)))
	}
	if l.CPUWaitShare != nil && *l.CPUWaitShare > b.CPUWait && l.CPUShare > b.BusyShare {
		why = append(why, fmt.Sprintf("%.0f%% of CPU time waiting for a CPU", *l.CPUWaitShare*100))
	}
	return strings.Join(why, ", ")
}

func fmtUS(v float64) string {
	return time.Duration(v * float64(time.Microsecond)).Round(10 * time.Microsecond).String()
}

// Report is the generator section of an export: how the load generator itself fared.
type Report struct {
	Seconds      float64  `json:"seconds"`                    // how long it was measured
	CPUs         int      `json:"cpus"`                       // the CPUs the process could use (GOMAXPROCS, at most the machine's)
	CPUSeconds   float64  `json:"cpu_seconds"`                // user + system CPU time the process used
	CPUShare     float64  `json:"cpu_share"`                  // cpu_seconds / (seconds × cpus)
	CPUWaitShare *float64 `json:"cpu_wait_share,omitempty"`   // Linux: of its threads' runnable time, the part spent waiting for a CPU
	CPUWaitS     *float64 `json:"cpu_wait_seconds,omitempty"` // Linux: that waiting time, summed over its threads
	// Machine names the machine the process ran on (a hash of its boot id, or of its host
	// name): shards of one machine share its CPUs, which a merge counts once.
	Machine string `json:"machine,omitempty"`
	// Shards and StarvedShards: in a merge, how many shards had a generator section and how
	// many of them were starved (absent in one run's export).
	Shards        int      `json:"shards,omitempty"`
	StarvedShards int      `json:"starved_shards,omitempty"`
	TimerLag      Dist     `json:"timer_lag"`     // how late a 5 ms sleep woke
	SchedLatency  Dist     `json:"sched_latency"` // Go scheduler: runnable → running
	TurnLag       Dist     `json:"turn_lag"`      // request loops: a turn's intended start → its send (every group)
	DispatchLag   Dist     `json:"dispatch_lag"`  // inside each answered tool call: send → written, reply's first byte → read (every group)
	GCPauses      GCPauses `json:"gc_pauses"`
	Windows       int      `json:"windows"` // windows judged
	// Starved is true when more than Bound.RunShare of the windows were starved; StarvedS is how
	// long they lasted, Starving lists them (figures taken in them are the runner's too).
	Starved  bool     `json:"starved"`
	StarvedS float64  `json:"starved_s"`
	Starving []Window `json:"starved_windows,omitempty"`
	Bound    string   `json:"bound"` // the bound judged against, in words
}

// Dist summarises a histogram of microseconds.
type Dist struct {
	Count int64   `json:"count"`
	P50US float64 `json:"p50_us"`
	P99US float64 `json:"p99_us"`
	MaxUS float64 `json:"max_us"`
}

// Summarize is a histogram's Dist (nil: none).
func Summarize(h *hdrhistogram.Histogram) Dist {
	if h == nil || h.TotalCount() == 0 {
		return Dist{}
	}
	return Dist{Count: h.TotalCount(), P50US: float64(h.ValueAtQuantile(50)), P99US: float64(h.ValueAtQuantile(99)), MaxUS: float64(h.Max())}
}

// GCPauses sums the run's garbage-collection stop-the-world pauses.
type GCPauses struct {
	Count   int64   `json:"count"`
	TotalUS float64 `json:"total_us"`
	MaxUS   float64 `json:"max_us"`
}

// Window is a stretch of a run whose windows were starved, in seconds since the run's start.
type Window struct {
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
	Why   string  `json:"why"`
}

// Describe is the bound in words.
func (b Limits) Describe() string {
	return fmt.Sprintf("a window (1 s) is starved past timer lag p99 %s, scheduler latency p99 %s, or %.0f%% of CPU time waiting while busy on %.0f%% of the CPUs; a run past %.0f%% of its windows",
		fmtUS(b.TimerLagP99), fmtUS(b.SchedP99), b.CPUWait*100, b.BusyShare*100, b.RunShare*100)
}

// Report is the run's figures so far (call it after Run returned for the whole run).
func (s *Sampler) Report() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Report{
		Seconds: s.last.AtS, CPUs: cpus(), TimerLag: Summarize(s.timer), SchedLatency: Summarize(s.sched),
		GCPauses: GCPauses{Count: s.gc.count, TotalUS: s.gc.total, MaxUS: s.gc.max},
		Windows:  s.nwin, StarvedS: s.last.StarvedS, Starving: s.windows, Bound: Bound.Describe(),
	}
	r.CPUSeconds = (s.cpu.cpu - s.cpu0.cpu).Seconds()
	r.CPUShare = s.cpu.share(s.cpu0)
	r.CPUWaitShare = s.cpu.waitShare(s.cpu0)
	if r.CPUWaitShare != nil {
		w := (s.cpu.wait - s.cpu0.wait).Seconds()
		r.CPUWaitS = &w
	}
	r.Machine = machine()
	r.Starved = r.Windows > 0 && r.StarvedS > Bound.RunShare*r.Seconds
	return r
}

// Why says in words why a starved report is ("" if it is not).
func (r *Report) Why() string {
	if r == nil || !r.Starved {
		return ""
	}
	why := ""
	if len(r.Starving) > 0 {
		why = ": " + r.Starving[0].Why
	}
	return fmt.Sprintf("starved %.1fs of %.1fs%s", r.StarvedS, r.Seconds, why)
}

// MostlyStarved says the generator was starved for most of the run (past Bound.MostShare of
// its time): what the run measured then was the runner as much as the server.
func (r *Report) MostlyStarved() bool {
	return r != nil && r.Seconds > 0 && r.StarvedS > Bound.MostShare*r.Seconds
}
