package engine

import (
	"github.com/mcpchaos/mcpchaos/generator"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
)

// generatorReport is the export's generator section: the sampler's figures, the request
// loops' turn lag and the calls' dispatch lag of every group, and a note when the generator was starved.
func generatorReport(s *generator.Sampler, exp *results.Export) *generator.Report {
	rep := s.Report()
	if h, err := exp.Overall.Histograms[metrics.TurnLag.String()].Decoded(); err == nil {
		rep.TurnLag = generator.Summarize(h)
	}
	if h, err := exp.Overall.Histograms[metrics.DispatchLag.String()].Decoded(); err == nil {
		rep.DispatchLag = generator.Summarize(h)
	}
	if why := rep.Why(); why != "" {
		exp.Run.Notes = append(exp.Run.Notes, "the load generator was "+why+" ("+rep.Bound+"): its timing figures from those windows (generator.starved_windows) are the runner's as much as the server's")
	}
	return &rep
}
