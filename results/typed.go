package results

import "github.com/mcpchaos/mcpchaos/metrics"

// The typed way to read a group's numbers from Go: the keys are metrics' own types, so a
// misspelt counter is a compile error rather than a zero read from the map (the maps stay,
// keyed by name, for the JSON export and its readers). Each reads zero on a nil group (a name
// Export.Group did not find) rather than panicking; Export.LookupGroup says why instead.

// Counter is the group's count of c.
func (g *Group) Counter(c metrics.Counter) int64 {
	if g == nil {
		return 0
	}
	return g.Counters[c.String()]
}

// Error is the group's transport errors of kind k.
func (g *Group) Error(k metrics.ErrorKind) int64 {
	if g == nil {
		return 0
	}
	return g.Errors[k.String()]
}

// Histogram is the group's histogram h (its summary and its full encoding).
func (g *Group) Histogram(h metrics.Hist) Histogram {
	if g == nil {
		return Histogram{}
	}
	return g.Histograms[h.String()]
}
