package prom

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// Collector exposes the recorders' live numbers to Prometheus while a run goes on. It reads
// at scrape time, like any other reader: counters, error counts and state gauges from the
// atomics, histograms from a Snapshot (which takes each histogram shard's lock briefly). It
// never slows a worker down between scrapes.
//
// Exposed, each labelled with group (and policy where it helps aggregation):
//
//	mcpchaos_<counter>_total                  every counter (docs/metrics.md)
//	mcpchaos_transport_errors_total{kind}     errors by kind
//	mcpchaos_false_healthy_seconds_total
//	mcpchaos_clients{state}                   clients by the state they believe they are in
//	mcpchaos_believed_live_but_dead           clients holding a session that died unnoticed
//	mcpchaos_<histogram>_seconds              histograms (probe_latency, ...), as Prometheus
//	                                          histograms with fixed buckets from 100 µs to 1 h
type Collector struct {
	groups []*metrics.Recorder
	// believed reports group i's clients that believe a dead session is alive; nil: not exposed.
	believed func(i int) int64

	counters []*prometheus.Desc
	errors   *prometheus.Desc
	falseH   *prometheus.Desc
	states   *prometheus.Desc
	blbd     *prometheus.Desc
	hists    []*prometheus.Desc
}

// Buckets are the upper bounds (seconds) of the exposed histograms' buckets. A sample is
// counted in a bucket by its HdrHistogram bucket's highest equivalent value, so a sample within
// 0.1% of a bound may land in the next bucket.
var Buckets = []float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600,
}

// docRef ends every HELP text: where each metric is defined.
const docRef = " Defined in docs/metrics.md of the mcpchaos repository."

// NewCollector returns a collector over the groups' recorders. believed may be nil.
func NewCollector(groups []*metrics.Recorder, believed func(i int) int64) *Collector {
	c := &Collector{groups: groups, believed: believed}
	gp := []string{"group", "policy"}
	for _, k := range metrics.Counters() {
		c.counters = append(c.counters, prometheus.NewDesc("mcpchaos_"+k.String()+"_total", k.Help()+docRef, gp, nil))
	}
	c.errors = prometheus.NewDesc("mcpchaos_transport_errors_total", "Transport and protocol errors by kind."+docRef, append(gp, "kind"), nil)
	c.falseH = prometheus.NewDesc("mcpchaos_false_healthy_seconds_total", "Time clients believed a dead session was alive, summed over sessions."+docRef, gp, nil)
	c.states = prometheus.NewDesc("mcpchaos_clients", "Clients by the state they believe their session is in."+docRef, append(gp, "state"), nil)
	c.blbd = prometheus.NewDesc("mcpchaos_believed_live_but_dead", "Clients that believe their session is live while the server has ended it."+docRef, gp, nil)
	for _, h := range metrics.Hists() {
		c.hists = append(c.hists, prometheus.NewDesc("mcpchaos_"+h.String()+"_seconds", h.Help()+docRef, gp, nil))
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.counters {
		ch <- d
	}
	ch <- c.errors
	ch <- c.falseH
	ch <- c.states
	if c.believed != nil {
		ch <- c.blbd
	}
	for _, d := range c.hists {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for i, g := range c.groups {
		l := []string{g.Name, g.Policy}
		for k, d := range c.counters {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(g.Get(metrics.Counter(k))), l...)
		}
		for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
			ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(g.Errors(k)), append(l, k.String())...)
		}
		ch <- prometheus.MustNewConstMetric(c.falseH, prometheus.CounterValue, g.FalseHealthy().Seconds(), l...)
		for s := metrics.StateStarting; s <= metrics.StateStopped; s++ {
			ch <- prometheus.MustNewConstMetric(c.states, prometheus.GaugeValue, float64(g.InState(s)), append(l, s.String())...)
		}
		if c.believed != nil {
			ch <- prometheus.MustNewConstMetric(c.blbd, prometheus.GaugeValue, float64(c.believed(i)), l...)
		}
		snap := g.Snapshot()
		for h, d := range c.hists {
			hist := snap.Hists[h]
			buckets := make(map[float64]uint64, len(Buckets))
			counts := make([]uint64, len(Buckets))
			for _, bar := range hist.Distribution() {
				if bar.Count == 0 {
					continue
				}
				sec := float64(bar.To) / 1e6
				if k := sort.SearchFloat64s(Buckets, sec); k < len(Buckets) {
					counts[k] += uint64(bar.Count)
				}
			}
			var cum uint64
			for k, b := range Buckets {
				cum += counts[k]
				buckets[b] = cum
			}
			sum := hist.Mean() * float64(hist.TotalCount()) / 1e6
			ch <- prometheus.MustNewConstHistogram(d, uint64(hist.TotalCount()), sum, buckets, l...)
		}
	}
}
