package report

import (
	"fmt"
	"math"

	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/hlog"
)

// latencyOverTimePlot draws one histogram's interval log (run --hlog): each group's p50
// (solid) and p99 (dashed) per interval, at the interval's end, fault windows and phases
// shaded. Intervals without a sample leave no point. ok is false when no interval has one.
func latencyOverTimePlot(e *results.Export, hist string, l *hlog.Log) (string, bool) {
	if l == nil {
		return "", false
	}
	c := &chart{Title: hist + " over time (p50 solid, p99 dashed, per interval)", XLabel: "seconds since start", YLabel: "latency (ms)", Width: 816, Height: 300}
	yMax, xMax := 0.0, 0.0
	for i, g := range e.Groups {
		p50 := series{Label: g.Name + " p50", Color: groupColor(i), Markers: true}
		p99 := series{Label: g.Name + " p99", Color: groupColor(i), Dash: "6 3", Markers: true}
		for _, iv := range l.Intervals {
			if iv.Group != g.Name || iv.Hist.TotalCount() == 0 {
				continue
			}
			a, b := float64(iv.Hist.ValueAtQuantile(50))/1000, float64(iv.Hist.ValueAtQuantile(99))/1000
			p50.X, p50.Y = append(p50.X, iv.EndS), append(p50.Y, a)
			p99.X, p99.Y = append(p99.X, iv.EndS), append(p99.Y, b)
			yMax, xMax = math.Max(yMax, b), math.Max(xMax, iv.EndS)
		}
		if len(p50.X) > 0 {
			c.Series = append(c.Series, p50, p99)
		}
	}
	if len(c.Series) == 0 {
		return "", false
	}
	c.Bands = runBands(e)
	c.XMin, c.XMax, c.YMin, c.YMax = 0, math.Max(xMax, e.Run.End.Sub(e.Run.Start).Seconds()), 0, math.Max(yMax*1.05, 0.001)
	return c.render(), true
}

// overTimeNote says where the plots over time come from, or why there are none.
func overTimeNote(r Run) string {
	if len(r.Intervals) == 0 {
		return "No interval logs beside this export: run with --hlog to get latency over time."
	}
	return fmt.Sprintf("From the HdrHistogram interval logs (.hlog) beside the export, one interval a second; %d histograms.", len(r.Intervals))
}
