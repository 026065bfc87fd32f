package results

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// Total sums groups into one: counters, errors and false-healthy time added, retry
// amplification recomputed from the sums, histograms merged from their full encodings (never
// percentiles averaged). The one place where groups are added up: the overall numbers of a run
// (Build), of a merge, the same group across shards (Merge), and the check that a file's
// overall numbers are its groups' (Parse). Policy and the declared session TTL are kept when
// every group has the same.
func Total(name string, gs []*Group) (Group, error) {
	out := Group{Name: name, Counters: map[string]int64{}, Errors: map[string]int64{}, Histograms: map[string]Histogram{}}
	if len(gs) > 0 {
		out.Policy = gs[0].Policy
	}
	var fh float64
	if len(gs) > 0 && gs[0].SessionTTL != nil {
		ttl := *gs[0].SessionTTL
		out.SessionTTL = &ttl
	}
	for _, g := range gs {
		if g.Policy != out.Policy {
			out.Policy = ""
		}
		if g.SessionTTL == nil || out.SessionTTL == nil || *g.SessionTTL != *out.SessionTTL {
			out.SessionTTL = nil // the TTL is kept when every group declares the same
		}
		out.Clients += g.Clients
		for k, v := range g.Counters {
			out.Counters[k] += v
		}
		for k, v := range g.Errors {
			out.Errors[k] += v
		}
		fh += g.FalseHealthySeconds
	}
	out.FalseHealthySeconds = fh
	if dead := out.Counters[metrics.SessionsDead.String()]; dead > 0 {
		out.RetryAmplification = float64(out.Counters[metrics.DeadSessionRequests.String()]) / float64(dead)
	}
	for _, h := range metrics.Hists() {
		merged := metrics.NewHistogram()
		for _, g := range gs {
			src, err := g.Histograms[h.String()].Decoded()
			if err != nil {
				return out, fmt.Errorf("group %s, histogram %s: %w", g.Name, h, err)
			}
			if dropped := merged.Merge(src); dropped != 0 {
				return out, fmt.Errorf("group %s, histogram %s: %d samples fall outside mcpchaos's histogram range", g.Name, h, dropped)
			}
		}
		enc, err := histogram(merged)
		if err != nil {
			return out, err
		}
		out.Histograms[h.String()] = enc
	}
	return out, nil
}

// total is the export's overall numbers: every group added up, with no policy.
func (e *Export) total() (Group, error) {
	all := make([]*Group, len(e.Groups))
	for i := range e.Groups {
		all[i] = &e.Groups[i]
	}
	o, err := Total("overall", all)
	o.Policy = ""
	return o, err
}
