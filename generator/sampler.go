// Package generator measures the load generator itself: how late its own goroutines woke
// (timer lag, the jHiccup measure), how long runnable goroutines waited for a CPU (the Go
// scheduler's latency, runtime/metrics /sched/latencies:seconds), GC pauses, the CPU the
// process used against the CPUs it had and, on Linux, how long its threads waited in the
// kernel's run queue. Every window of a run (a second) is judged against a documented bound
// (Bound); a run whose windows were starved past it is marked starved, so that the timing
// figures it took then are read as the runner's, not the server's (docs/metrics.md,
// "Generator"; docs/gate.md).
//
// The request loops' own lag (a turn's intended start to its send) and the dispatch lag inside
// each answered tool call (clients/wire) are recorded by the fleets in each group's turn_lag
// and dispatch_lag histograms (package metrics); this package summarises them.
//
// It reads the process's own runtime and /proc/self; it never touches sessions, servers or
// files, prints nothing and judges nothing but its own process.
package generator

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Sampler measures the process while a run goes on. Start it with Run; read it live with Live
// and at the end with Report. Its histograms are its own goroutine's; the others read copies
// under its lock once a window.
type Sampler struct {
	window time.Duration
	sleep  time.Duration
	start  time.Time

	mu      sync.Mutex
	timer   *hdrhistogram.Histogram // timer lag of the whole run, µs
	sched   *hdrhistogram.Histogram // scheduler latency of the whole run, µs
	gc      pauses
	windows []Window // starved windows
	last    Live
	cpu     cpuClock // at the last window's end
	cpu0    cpuClock // at the run's start
	nwin    int
}

// New is a sampler whose windows are a second long, probing the timer every 5 ms.
func New() *Sampler {
	return &Sampler{window: time.Second, sleep: 5 * time.Millisecond, timer: newHist(), sched: newHist()}
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 3600*1000*1000, 3) }

// Run samples until ctx ends; call it once, in its own goroutine.
func (s *Sampler) Run(ctx context.Context) {
	s.mu.Lock()
	s.start = time.Now()
	s.cpu = readCPU(s.start)
	s.cpu0 = s.cpu
	s.mu.Unlock()
	rt := newRuntimeReader()
	rt.delta() // the process's history before the run is not the run's
	win := newHist()
	t := time.NewTimer(s.sleep)
	defer t.Stop()
	winEnd := s.start.Add(s.window)
	for {
		asleep := time.Now()
		t.Reset(s.sleep)
		select {
		case <-ctx.Done():
			s.close(time.Now(), win, rt)
			return
		case <-t.C:
		}
		now := time.Now()
		_ = win.RecordValue(max(0, now.Sub(asleep)-s.sleep).Microseconds())
		if now.Before(winEnd) {
			continue
		}
		s.close(now, win, rt)
		win.Reset()
		winEnd = now.Add(s.window)
	}
}

// close ends a window at now: its figures go to the run's and are judged against Bound.
func (s *Sampler) close(now time.Time, win *hdrhistogram.Histogram, rt *runtimeReader) {
	sched, gc := rt.delta()
	s.mu.Lock()
	defer s.mu.Unlock()
	from := s.cpu
	s.cpu = readCPU(now)
	l := Live{
		AtS:          now.Sub(s.start).Seconds(),
		TimerLagP99:  us(win.ValueAtQuantile(99)),
		TimerLagMax:  us(win.Max()),
		SchedP99:     us(sched.ValueAtQuantile(99)),
		CPUShare:     s.cpu.share(from),
		CPUWaitShare: s.cpu.waitShare(from),
		GCPause:      gc.total,
	}
	l.Why = Bound.judge(l)
	l.Starved = l.Why != ""
	if win.TotalCount() == 0 && sched.TotalCount() == 0 {
		return // a window cut to nothing at the run's end
	}
	s.timer.Merge(win)
	s.sched.Merge(sched)
	s.gc.add(gc)
	s.nwin++
	fromS := s.last.AtS
	if l.Starved {
		if n := len(s.windows); n > 0 && s.windows[n-1].ToS == fromS { // one stretch, named by its first window's reason
			s.windows[n-1].ToS = l.AtS
		} else {
			s.windows = append(s.windows, Window{FromS: fromS, ToS: l.AtS, Why: l.Why})
		}
		l.StarvedS = s.last.StarvedS + (l.AtS - fromS)
	} else {
		l.StarvedS = s.last.StarvedS
	}
	s.last = l
}

// Live is the last window's figures and the run's starved time so far: for the progress view
// and the live metrics.
type Live struct {
	AtS          float64  `json:"at_s"`
	TimerLagP99  float64  `json:"timer_lag_p99_us"`
	TimerLagMax  float64  `json:"timer_lag_max_us"`
	SchedP99     float64  `json:"sched_latency_p99_us"`
	CPUShare     float64  `json:"cpu_share"`
	CPUWaitShare *float64 `json:"cpu_wait_share,omitempty"`
	GCPause      float64  `json:"gc_pause_us"`
	Starved      bool     `json:"starved"`
	Why          string   `json:"why,omitempty"`
	StarvedS     float64  `json:"starved_s"`
}

// Live is the last window's figures (zero before the first window closed).
func (s *Sampler) Live() Live {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func us(v int64) float64 { return float64(v) }

// cpuClock is the process's CPU time, and its threads' run-queue wait where the kernel tells.
type cpuClock struct {
	at      time.Time
	cpu     time.Duration // user + system
	wait    time.Duration // time runnable, waiting for a CPU (Linux schedstat)
	run     time.Duration // time on a CPU (Linux schedstat)
	hasWait bool
}

func readCPU(at time.Time) cpuClock {
	c := cpuClock{at: at}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		c.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c.run, c.wait, c.hasWait = schedstat()
	return c
}

// share is the CPU the process used between from and c against the CPUs it could use.
func (c cpuClock) share(from cpuClock) float64 {
	wall := c.at.Sub(from.at)
	if wall <= 0 {
		return 0
	}
	return float64(c.cpu-from.cpu) / (float64(wall) * float64(cpus()))
}

// waitShare is, of the time the process's threads wanted a CPU, the part they waited for one.
func (c cpuClock) waitShare(from cpuClock) *float64 {
	if !c.hasWait || !from.hasWait {
		return nil
	}
	w, r := c.wait-from.wait, c.run-from.run
	if w < 0 || r < 0 || w+r == 0 { // threads ended between the reads
		return nil
	}
	v := float64(w) / float64(w+r)
	return &v
}

func cpus() int { return max(1, min(runtime.GOMAXPROCS(0), runtime.NumCPU())) }

// runtimeReader reads the Go runtime's scheduler latencies and GC pauses as deltas.
type runtimeReader struct {
	samples    []metrics.Sample
	prevSched  *metrics.Float64Histogram
	prevPauses *metrics.Float64Histogram
}

func newRuntimeReader() *runtimeReader {
	return &runtimeReader{samples: []metrics.Sample{
		{Name: "/sched/latencies:seconds"}, {Name: "/sched/pauses/total/gc:seconds"},
	}}
}

// delta is the scheduler latencies (µs) and GC pauses since the last call.
func (r *runtimeReader) delta() (*hdrhistogram.Histogram, pauses) {
	metrics.Read(r.samples)
	h := newHist()
	var p pauses
	if r.samples[0].Value.Kind() == metrics.KindFloat64Histogram {
		cur := r.samples[0].Value.Float64Histogram()
		addDelta(cur, r.prevSched, func(v float64, n uint64) { _ = h.RecordValues(int64(v*1e6), int64(n)) })
		r.prevSched = copyHist(cur)
	}
	if r.samples[1].Value.Kind() == metrics.KindFloat64Histogram {
		cur := r.samples[1].Value.Float64Histogram()
		addDelta(cur, r.prevPauses, func(v float64, n uint64) {
			p.count += int64(n)
			p.total += v * 1e6 * float64(n)
			p.max = max(p.max, v*1e6)
		})
		r.prevPauses = copyHist(cur)
	}
	return h, p
}

// addDelta calls add with each bucket's representative value (its lower bound, or the upper
// one for the first, unbounded bucket) and how many samples it gained since prev.
func addDelta(cur, prev *metrics.Float64Histogram, add func(v float64, n uint64)) {
	for i, n := range cur.Counts {
		if prev != nil && i < len(prev.Counts) {
			n -= prev.Counts[i]
		}
		if n == 0 {
			continue
		}
		v := cur.Buckets[i]
		if v < 0 || v != v || v > 1e9 { // -Inf lower bound
			v = cur.Buckets[i+1]
		}
		add(max(v, 0), n)
	}
}

func copyHist(h *metrics.Float64Histogram) *metrics.Float64Histogram {
	return &metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: h.Buckets}
}

// pauses sums GC stop-the-world pauses, in µs.
type pauses struct {
	count      int64
	total, max float64
}

func (p *pauses) add(o pauses) {
	p.count += o.count
	p.total += o.total
	p.max = max(p.max, o.max)
}
