package prom

import "github.com/prometheus/client_golang/prometheus"

// GeneratorState is the load generator's own figures of the last window (a second), as the
// live endpoint shows them (package generator measures them; docs/metrics.md, "Generator").
type GeneratorState struct {
	TimerLagP99S  float64  // how late a 5 ms sleep woke, p99, seconds
	SchedP99S     float64  // Go scheduler latency p99, seconds
	CPUShare      float64  // CPU used / CPUs the process could use
	CPUWaitShare  *float64 // Linux: of its threads' runnable time, the part waiting for a CPU
	GCPauseS      float64  // GC stop-the-world pauses in the window, seconds
	Starved       bool     // the window passed the generator's bound
	StarvedTotalS float64  // starved windows so far, seconds
}

// GeneratorCollector exposes the load generator's own figures:
//
//	mcpchaos_generator_timer_lag_p99_seconds       how late the generator's timers fired
//	mcpchaos_generator_sched_latency_p99_seconds   runnable goroutines' wait for a CPU
//	mcpchaos_generator_cpu_share                   CPU used / CPUs the process could use
//	mcpchaos_generator_cpu_wait_share              Linux: runnable time spent waiting for a CPU
//	mcpchaos_generator_gc_pause_seconds            GC pauses in the last window
//	mcpchaos_generator_starved                     1 while the last window was starved
//	mcpchaos_generator_starved_seconds_total       starved time so far
type GeneratorCollector struct {
	state                                              func() GeneratorState
	timer, sched, cpu, wait, gc, starved, starvedTotal *prometheus.Desc
}

// NewGeneratorCollector returns a collector of the figures state reads at scrape time.
func NewGeneratorCollector(state func() GeneratorState) *GeneratorCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("mcpchaos_generator_"+name, help+docRef, nil, nil)
	}
	return &GeneratorCollector{
		state:        state,
		timer:        d("timer_lag_p99_seconds", "The load generator's timer lag (how late a 5 ms sleep woke), p99 of the last second."),
		sched:        d("sched_latency_p99_seconds", "The load generator's Go scheduler latency (runnable to running), p99 of the last second."),
		cpu:          d("cpu_share", "CPU the load generator used in the last second, as a share of the CPUs it could use."),
		wait:         d("cpu_wait_share", "Of the load generator's runnable time in the last second, the share spent waiting for a CPU (Linux)."),
		gc:           d("gc_pause_seconds", "The load generator's GC stop-the-world pauses in the last second."),
		starved:      d("starved", "1 while the last second passed the load generator's starvation bound: its timing figures are its own."),
		starvedTotal: d("starved_seconds_total", "Seconds of the run the load generator was starved."),
	}
}

// Describe implements prometheus.Collector.
func (c *GeneratorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.timer, c.sched, c.cpu, c.wait, c.gc, c.starved, c.starvedTotal} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *GeneratorCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.state()
	g := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	g(c.timer, s.TimerLagP99S)
	g(c.sched, s.SchedP99S)
	g(c.cpu, s.CPUShare)
	if s.CPUWaitShare != nil {
		g(c.wait, *s.CPUWaitShare)
	}
	g(c.gc, s.GCPauseS)
	starved := 0.0
	if s.Starved {
		starved = 1
	}
	g(c.starved, starved)
	ch <- prometheus.MustNewConstMetric(c.starvedTotal, prometheus.CounterValue, s.StarvedTotalS)
}
