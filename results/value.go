package results

import "github.com/mcpchaos/mcpchaos/gate"

// Samples is how many samples the histogram behind the metric holds in g (0 for metrics that
// are not histogram statistics).
func Samples(m gate.Metric, g *Group) int64 {
	if m.Kind() != gate.KindHist {
		return 0
	}
	return g.Histograms[m.Key()].Count
}

// Value reads the metric m from a group's export. ok is false when the metric has no value: a
// histogram statistic of an empty histogram (count is always defined).
func Value(m gate.Metric, g *Group) (v float64, ok bool) {
	switch m.Kind() {
	case gate.KindClients:
		return float64(g.Clients), true
	case gate.KindCounter:
		return float64(g.Counters[m.Key()]), true
	case gate.KindErrors:
		if m.Key() != "" {
			return float64(g.Errors[m.Key()]), true
		}
		var n int64
		for _, c := range g.Errors {
			n += c
		}
		return float64(n), true
	case gate.KindRetryAmplification:
		return g.RetryAmplification, true
	case gate.KindFalseHealthy:
		return g.FalseHealthySeconds, true
	case gate.KindHist:
		h, present := g.Histograms[m.Key()]
		if m.Stat() == "count" {
			return float64(h.Count), true
		}
		if !present || h.Count == 0 {
			return 0, false
		}
		switch m.Stat() {
		case "min":
			return float64(h.MinUS), true
		case "max":
			return float64(h.MaxUS), true
		case "mean":
			if hh, err := h.Decoded(); err == nil {
				return hh.Mean(), true
			}
			return h.MeanUS, true
		}
		if v, known := h.quantile(m.Percentile()); known {
			return float64(v), true
		}
		hh, err := h.Decoded()
		if err != nil {
			return 0, false
		}
		return float64(hh.ValueAtQuantile(m.Percentile())), true
	}
	return 0, false
}
