package prom

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// RunState is what a run is doing now, as the live metrics endpoint shows it: the phase in
// force ("" before the first and after the last), the faults in force, and whether the run has
// finished (its numbers are then final).
type RunState struct {
	Phase    string
	Faults   []string
	Finished bool
}

// RunCollector exposes the run as a whole to Prometheus, beside the groups' Collector:
//
//	mcpchaos_run_info                          1: the run's identity is in its labels (run_id,
//	                                           workload, shard: the endpoint adds them to every series)
//	mcpchaos_run_label{label, value}           1 per run --label key=value
//	mcpchaos_phase{phase}                      1 for the phase in force, 0 for the others
//	mcpchaos_fault_active{fault}               1 while the fault is in force, else 0
//	mcpchaos_run_finished                      1 once the run has ended: the numbers are final
//
// Every phase and fault of the plan has a series from the first scrape on, so that a graph
// shows a step rather than a series appearing and vanishing.
type RunCollector struct {
	phases, faults []string
	labels         map[string]string
	state          func() RunState

	info, label, phase, fault, finished *prometheus.Desc
}

// NewRunCollector returns a collector of the run's state; phases and faults are the plan's
// names, labels the run's labels, state reads the run's state at scrape time.
func NewRunCollector(phases, faults []string, labels map[string]string, state func() RunState) *RunCollector {
	c := &RunCollector{phases: phases, faults: faults, labels: labels, state: state}
	c.info = prometheus.NewDesc("mcpchaos_run_info", "The run: 1, with the run's id and workload as labels."+docRef, nil, nil)
	c.label = prometheus.NewDesc("mcpchaos_run_label", "A label of the run (run --label key=value): 1."+docRef, []string{"label", "value"}, nil)
	c.phase = prometheus.NewDesc("mcpchaos_phase", "1 for the workload phase in force, 0 for the others."+docRef, []string{"phase"}, nil)
	c.fault = prometheus.NewDesc("mcpchaos_fault_active", "1 while the fault is in force on some group's proxy, else 0."+docRef, []string{"fault"}, nil)
	c.finished = prometheus.NewDesc("mcpchaos_run_finished", "1 once the run has ended and the numbers are final, else 0."+docRef, nil, nil)
	return c
}

// Describe implements prometheus.Collector.
func (c *RunCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.info, c.label, c.phase, c.fault, c.finished} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *RunCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.state()
	one := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1)
	keys := make([]string, 0, len(c.labels))
	for k := range c.labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(c.label, prometheus.GaugeValue, 1, k, c.labels[k])
	}
	for _, p := range c.phases {
		ch <- prometheus.MustNewConstMetric(c.phase, prometheus.GaugeValue, one(p == s.Phase), p)
	}
	active := map[string]bool{}
	for _, f := range s.Faults {
		active[f] = true
	}
	for _, f := range c.faults {
		ch <- prometheus.MustNewConstMetric(c.fault, prometheus.GaugeValue, one(active[f]), f)
	}
	ch <- prometheus.MustNewConstMetric(c.finished, prometheus.GaugeValue, one(s.Finished))
}
