package report

import (
	"fmt"
	"github.com/mcpchaos/mcpchaos/gate"
	"math"
	"sort"

	"github.com/mcpchaos/mcpchaos/results"
)

// The plots of the report, as charts (svg.go). Colours are fixed per group index, so the same
// group keeps its colour in every plot of a run.

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"}

func groupColor(i int) string { return palette[i%len(palette)] }

// percentileTicks label a 1/(1-q) axis in percentiles, as HdrHistogram's plotter does.
func percentileTicks(xMax float64) []tick {
	var ts []tick
	for x := 1.0; x <= xMax*1.0001; x *= 10 {
		ts = append(ts, tick{x, percentLabel(x)})
	}
	return ts
}

func percentLabel(x float64) string {
	if x == 1 {
		return "0%"
	}
	p := 100 * (1 - 1/x)
	digits := max(0, int(math.Round(math.Log10(x)))-2)
	return fmt.Sprintf("%.*f%%", digits, p)
}

// latencyPlot draws one histogram of every group as a percentile curve: latency (ms) against
// 1/(1-percentile) on a log scale, so the tail gets the room it deserves. ok is false when no
// group has a sample.
func latencyPlot(e *results.Export, hist string) (string, bool, error) {
	c := &chart{Title: hist + " by percentile", XLabel: "percentile", YLabel: "latency (ms)", Width: 816, Height: 330, XLog: true}
	xMax, yMax := 100.0, 0.0
	any := false
	for i, g := range e.Groups {
		h := g.Histograms[hist]
		if h.Count == 0 {
			continue
		}
		hh, err := h.Decoded()
		if err != nil {
			return "", false, err
		}
		sr := series{Label: fmt.Sprintf("%s (n=%d)", g.Name, h.Count), Color: groupColor(i)}
		for _, b := range hh.CumulativeDistributionWithTicks(5) {
			if b.Quantile >= 100 {
				break
			}
			sr.X = append(sr.X, 1/(1-b.Quantile/100))
			sr.Y = append(sr.Y, float64(b.ValueAt)/1000)
		}
		// The top of the curve: the max, at the resolution the sample count allows.
		top := math.Pow(10, math.Ceil(math.Log10(float64(max(h.Count, 2)))))
		if n := len(sr.X); n > 0 {
			top = math.Max(top, sr.X[n-1])
		}
		sr.X, sr.Y = append(sr.X, top), append(sr.Y, float64(h.MaxUS)/1000)
		xMax, yMax = math.Max(xMax, top), math.Max(yMax, float64(h.MaxUS)/1000)
		c.Series = append(c.Series, sr)
		any = true
	}
	if !any {
		return "", false, nil
	}
	c.XMin, c.XMax, c.YMin, c.YMax = 1, xMax, 0, yMax*1.05
	c.XTicks = percentileTicks(xMax)
	return c.render(), true, nil
}

// faultWindow is when a fault was in force anywhere in the run.
type faultWindow struct {
	name       string
	start, end float64
}

func faultWindows(e *results.Export) []faultWindow {
	runEnd := e.Run.End.Sub(e.Run.Start).Seconds()
	byName := map[string]*faultWindow{}
	var order []string
	for _, f := range e.Faults {
		if f.Error != "" {
			continue
		}
		end := f.RemovedAtS
		if end == 0 {
			end = runEnd
		}
		w := byName[f.Fault]
		if w == nil {
			w = &faultWindow{name: f.Fault, start: f.AddedAtS, end: end}
			byName[f.Fault] = w
			order = append(order, f.Fault)
		}
		w.start, w.end = math.Min(w.start, f.AddedAtS), math.Max(w.end, end)
	}
	out := make([]faultWindow, len(order))
	for i, n := range order {
		out[i] = *byName[n]
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

var faultFills = []string{"rgba(230,120,40,.24)", "rgba(120,120,120,.24)", "rgba(170,60,160,.22)", "rgba(40,150,150,.22)"}

// runBands are the fault windows of a run as shaded bands, and its phases (when the export
// records them) as faint alternating bands named at their top.
func runBands(e *results.Export) []band {
	var bs []band
	for i, p := range e.Phases {
		fill := "rgba(0,0,0,0)"
		if i%2 == 1 {
			fill = "rgba(60,90,160,.06)"
		}
		bs = append(bs, band{X0: p.StartS, X1: p.EndS, Fill: fill, Note: p.Phase})
	}
	for i, w := range faultWindows(e) {
		bs = append(bs, band{X0: w.start, X1: w.end, Fill: faultFills[i%len(faultFills)], Label: "fault " + w.name})
	}
	return bs
}

// states drawn in a group's timeline, with their colours.
var timelineStates = []struct {
	name, label, color, dash string
}{
	{"live", "live (believed)", "#1e78c8", ""},
	{"reconnecting", "reconnecting", "#f0a000", ""},
	{"reinit", "re-initializing", "#64aa3c", ""},
	{results.StateBelievedLiveButDead, "believed live, in truth dead", "#d21e1e", "6 3"},
	{"starting", "starting", "#969696", "2 3"},
}

// timelinePlot draws a group's clients by state over the run, fault windows shaded.
func timelinePlot(e *results.Export, group string) (string, bool, error) {
	if e.Timeline == nil || len(e.Timeline.Samples) == 0 {
		return "", false, nil
	}
	c := &chart{Title: "group " + group + ": sessions by state", XLabel: "seconds since start", YLabel: "clients", Width: 816, Height: 300}
	yMax, xMax := 1.0, 0.0
	for _, st := range timelineStates {
		sr := series{Label: st.label, Color: st.color, Dash: st.dash}
		for _, s := range e.Timeline.Samples {
			v := float64(s.Groups[group].States[st.name])
			sr.X, sr.Y = append(sr.X, s.TS), append(sr.Y, v)
			yMax, xMax = math.Max(yMax, v), math.Max(xMax, s.TS)
		}
		c.Series = append(c.Series, sr)
	}
	c.Bands = runBands(e)
	c.XMin, c.XMax, c.YMin, c.YMax = 0, math.Max(xMax, e.Run.End.Sub(e.Run.Start).Seconds()), 0, yMax*1.05
	return c.render(), true, nil
}

// damagePlot draws, per group, the running totals of misattributed errors (solid) and
// dead-session requests (dashed), fault windows shaded: when in the run the cascade happened.
func damagePlot(e *results.Export) (string, bool, error) {
	if e.Timeline == nil || len(e.Timeline.Samples) == 0 {
		return "", false, nil
	}
	c := &chart{Title: "misattributed errors and dead-session requests (running totals)", XLabel: "seconds since start", YLabel: "count", Width: 816, Height: 300}
	yMax, xMax := 1.0, 0.0
	for i, g := range e.Groups {
		for _, k := range []struct{ counter, dash string }{{"misattributed_errors", ""}, {"dead_session_requests", "6 3"}} {
			sr := series{Label: g.Name + " " + k.counter, Color: groupColor(i), Dash: k.dash}
			for _, s := range e.Timeline.Samples {
				v := float64(s.Groups[g.Name].Counters[k.counter])
				sr.X, sr.Y = append(sr.X, s.TS), append(sr.Y, v)
				yMax, xMax = math.Max(yMax, v), math.Max(xMax, s.TS)
			}
			c.Series = append(c.Series, sr)
		}
	}
	c.Bands = runBands(e)
	c.XMin, c.XMax, c.YMin, c.YMax = 0, math.Max(xMax, e.Run.End.Sub(e.Run.Start).Seconds()), 0, yMax*1.05
	return c.render(), true, nil
}

// trendMetrics are plotted across runs.
var trendMetrics = []string{
	"misattributed_errors", "retry_amplification", "stale_events_applied",
	"probe_latency.p99", "tool_call_latency.p99", "false_healthy_seconds",
}

// trendTicks label each run on a trend's x axis: its number, and its labels when it has any
// (release=v1.4.2), or its start time.
func trendTicks(runs []Run) []tick {
	ts := make([]tick, len(runs))
	for i, r := range runs {
		label := fmt.Sprintf("#%d", i+1)
		if l := shortLabels(r.Export.Run.Labels); l != "" {
			label += " " + l
		}
		ts[i] = tick{float64(i + 1), label}
	}
	return ts
}

// shortLabels are a run's label values (not keys), for a crowded axis: "v1.4.2 3f2a1c".
func shortLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += " "
		}
		s += labels[k]
	}
	if len(s) > 24 {
		s = s[:23] + "…"
	}
	return s
}

// trendPlot draws one metric per group across runs (x: run number, oldest first). Only good
// runs are drawn: a failed, interrupted or aborted run measured less than it was asked, so its
// numbers would read as improvements; it is a marked band and a gap in the lines.
func trendPlot(runs []Run, metric string) (string, error) {
	m, err := gate.ParseMetric(metric)
	if err != nil {
		return "", err
	}
	yLabel, scale := "count", 1.0
	switch {
	case m.Unit() == gate.UnitSeconds:
		yLabel = "seconds"
	case m.Unit() == gate.UnitDuration:
		yLabel, scale = "ms", 1000
	case m.Unit() == gate.UnitRatio:
		yLabel = "ratio"
	}
	c := &chart{Title: metric + " across runs", XLabel: "run", YLabel: yLabel, Width: 640, Height: 300, XTicks: trendTicks(runs)}
	for _, r := range runs {
		if len(r.Export.Run.Labels) > 0 {
			c.XTickSlant, c.Height = true, 300+slantRoom
			break
		}
	}
	var names []string
	seen := map[string]int{}
	for _, r := range runs {
		for _, g := range r.Export.Groups {
			if _, ok := seen[g.Name]; !ok {
				seen[g.Name] = len(names)
				names = append(names, g.Name)
			}
		}
	}
	yMax := 0.0
	for i, r := range runs {
		if !results.Good(r.Export) {
			c.Bands = append(c.Bands, band{X0: float64(i+1) - 0.4, X1: float64(i+1) + 0.4, Fill: "rgba(200,30,30,.15)", Note: badWord(r.Export)})
		}
	}
	for _, name := range names {
		sr := series{Label: name, Color: groupColor(seen[name]), Markers: true}
		for i, r := range runs {
			v := math.NaN()
			if g := r.Export.Group(name); g != nil && results.Good(r.Export) {
				if x, ok := results.Value(m, g); ok {
					v = x / scale
					yMax = math.Max(yMax, v)
				}
			}
			sr.X, sr.Y = append(sr.X, float64(i+1)), append(sr.Y, v)
		}
		c.Series = append(c.Series, sr)
	}
	if yMax <= 0 {
		yMax = 1 // all zero: a flat line at the bottom
	}
	c.XMin, c.XMax, c.YMin, c.YMax = 0.5, float64(len(runs))+0.5, 0, yMax*1.08
	return c.render(), nil
}

// badWord names what went wrong with a run, in one word for a plot.
func badWord(e *results.Export) string {
	switch {
	case e.Run.Error != "":
		return "failed"
	case e.Run.Aborted != "":
		return "aborted"
	case e.Run.Interrupted:
		return "interrupted"
	}
	return ""
}
