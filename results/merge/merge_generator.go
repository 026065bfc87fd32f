package merge

import (
	"github.com/mcpchaos/mcpchaos/generator"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
)

// mergeGenerator is the merged run's generator section (generator.Combine: starved windows as
// a union over time, CPUs once per machine), with the turn and dispatch lag of the merged
// histograms, which are exact where the shards' summaries could only give the worst.
func mergeGenerator(parts []results.Part, e *results.Export) *generator.Report {
	gs := make([]generator.Part, 0, len(parts))
	for _, p := range parts {
		gs = append(gs, generator.Part{Report: p.Export.Generator, OffsetS: p.Export.Run.Start.Sub(e.Run.Start).Seconds()})
	}
	g := generator.Combine(gs)
	if g == nil {
		return nil
	}
	if h, err := e.Overall.Histograms[metrics.TurnLag.String()].Decoded(); err == nil && h.TotalCount() > 0 {
		g.TurnLag = generator.Summarize(h)
	}
	if h, err := e.Overall.Histograms[metrics.DispatchLag.String()].Decoded(); err == nil && h.TotalCount() > 0 {
		g.DispatchLag = generator.Summarize(h)
	}
	return g
}
