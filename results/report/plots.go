package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/mcpchaos/mcpchaos/results"
)

// The plots, drawn by gonum/plot as SVG. Every text in them is set in Liberation Sans, which
// the HTML page embeds once, so that the page renders the same everywhere and offline.

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, s := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font, &p.Legend.TextStyle.Font} {
		*s = font.From(sans, 11)
	}
	p.Title.TextStyle.Font.Size = 13
	p.X.Tick.Label.Font = font.From(sans, 9)
	p.Y.Tick.Label.Font = font.From(sans, 9)
	p.Legend.TextStyle.Font = font.From(sans, 9)
	p.Y.Tick.Marker = plainTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// plainTicks are gonum's default ticks labelled without trailing zeros ("25", not "25.00").
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			v, _ := strconv.ParseFloat(strconv.FormatFloat(ts[i].Value, 'g', 6, 64), 64) // no 0.30000000000000004
			ts[i].Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ts
}

var svgProlog = regexp.MustCompile(`(?s)^<\?xml[^>]*\?>\s*(<!--.*?-->\s*)?`)
var svgNamespaces = regexp.MustCompile(`\s+xmlns(:xlink)?="[^"]*"`)

// svg renders a plot for inline use in HTML: the plot on the left, its legend in a column of
// its own on the right (so that it never hides a line), without the XML prolog and namespace
// attributes (HTML does not need them), scaled by CSS.
func svg(p *plot.Plot, w, h vg.Length) (string, error) {
	const legendW = 2.3 * vg.Inch
	leg := p.Legend
	p.Legend = plot.NewLegend()
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -legendW, 0, 0))
	leg.Top, leg.Left = true, true
	leg.Padding = vg.Points(2.5)
	title := p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	leg.Draw(draw.Crop(dc, w-legendW+vg.Points(8), 0, 0, -title-vg.Points(4)))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	s := svgProlog.ReplaceAllString(buf.String(), "")
	s = svgNamespaces.ReplaceAllString(s, "")
	return strings.Replace(s, "<svg ", `<svg class="plot" role="img" `, 1), nil
}

// color i of the groups' palette; the same group keeps its colour in every plot of a run.
func groupColor(i int) color.Color { return plotutil.Color(i) }

// percentileTicks label a 1/(1-q) axis in percentiles, as HdrHistogram's plotter does.
type percentileTicks struct{}

func (percentileTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for x := 1.0; x <= max*1.0001; x *= 10 {
		if x < min/1.0001 {
			continue
		}
		ts = append(ts, plot.Tick{Value: x, Label: percentLabel(x)})
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
	p := newPlot(hist+" by percentile", "percentile", "latency (ms)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks{}
	xMax := 100.0
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
		var pts plotter.XYs
		for _, b := range hh.CumulativeDistributionWithTicks(5) {
			if b.Quantile >= 100 {
				break
			}
			pts = append(pts, plotter.XY{X: 1 / (1 - b.Quantile/100), Y: float64(b.ValueAt) / 1000})
		}
		// The top of the curve: the max, at the resolution the sample count allows.
		top := math.Pow(10, math.Ceil(math.Log10(float64(max(h.Count, 2)))))
		if len(pts) > 0 {
			top = math.Max(top, pts[len(pts)-1].X)
		}
		pts = append(pts, plotter.XY{X: top, Y: float64(h.MaxUS) / 1000})
		xMax = math.Max(xMax, top)
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", false, err
		}
		l.Color = groupColor(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (n=%d)", g.Name, h.Count), l)
		any = true
	}
	if !any {
		return "", false, nil
	}
	p.X.Min, p.X.Max = 1, xMax
	p.Y.Min = 0
	s, err := svg(p, 8.5*vg.Inch, 3.4*vg.Inch)
	return s, true, err
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

var faultFills = []color.Color{
	color.NRGBA{R: 230, G: 120, B: 40, A: 60},
	color.NRGBA{R: 120, G: 120, B: 120, A: 60},
	color.NRGBA{R: 170, G: 60, B: 160, A: 55},
	color.NRGBA{R: 40, G: 150, B: 150, A: 55},
}

// shadeFaults draws the fault windows as bands from 0 to yMax, behind what follows.
func shadeFaults(p *plot.Plot, ws []faultWindow, yMax float64) error {
	for i, w := range ws {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: w.start, Y: 0}, {X: w.end, Y: 0}, {X: w.end, Y: yMax}, {X: w.start, Y: yMax}})
		if err != nil {
			return err
		}
		poly.Color = faultFills[i%len(faultFills)]
		poly.LineStyle.Width = 0
		p.Add(poly)
		p.Legend.Add("fault "+w.name, poly)
	}
	return nil
}

// states drawn in a group's timeline, with their colours.
var timelineStates = []struct {
	name, label string
	color       color.Color
	dashes      []vg.Length
}{
	{"live", "live (believed)", color.NRGBA{R: 30, G: 120, B: 200, A: 255}, nil},
	{"reconnecting", "reconnecting", color.NRGBA{R: 240, G: 160, B: 0, A: 255}, nil},
	{"reinit", "re-initializing", color.NRGBA{R: 100, G: 170, B: 60, A: 255}, nil},
	{results.StateBelievedLiveButDead, "believed live, in truth dead", color.NRGBA{R: 210, G: 30, B: 30, A: 255}, []vg.Length{vg.Points(4), vg.Points(2)}},
	{"starting", "starting", color.NRGBA{R: 150, G: 150, B: 150, A: 255}, []vg.Length{vg.Points(1), vg.Points(2)}},
}

// timelinePlot draws a group's clients by state over the run, fault windows shaded.
func timelinePlot(e *results.Export, group string) (string, bool, error) {
	if e.Timeline == nil || len(e.Timeline.Samples) == 0 {
		return "", false, nil
	}
	p := newPlot("group "+group+": sessions by state", "seconds since start", "clients")
	yMax := 1.0
	series := make([]plotter.XYs, len(timelineStates))
	for _, s := range e.Timeline.Samples {
		gs := s.Groups[group]
		for i, st := range timelineStates {
			v := float64(gs.States[st.name])
			series[i] = append(series[i], plotter.XY{X: s.TS, Y: v})
			yMax = math.Max(yMax, v)
		}
	}
	yMax *= 1.05
	if err := shadeFaults(p, faultWindows(e), yMax); err != nil {
		return "", false, err
	}
	for i, st := range timelineStates {
		l, err := plotter.NewLine(series[i])
		if err != nil {
			return "", false, err
		}
		l.Color = st.color
		l.Width = vg.Points(1.5)
		l.Dashes = st.dashes
		p.Add(l)
		p.Legend.Add(st.label, l)
	}
	p.Y.Min, p.Y.Max = 0, yMax
	p.X.Min = 0
	s, err := svg(p, 8.5*vg.Inch, 3*vg.Inch)
	return s, true, err
}

// damagePlot draws, per group, the running totals of misattributed errors (solid) and
// dead-session requests (dashed), fault windows shaded: when in the run the cascade happened.
func damagePlot(e *results.Export) (string, bool, error) {
	if e.Timeline == nil || len(e.Timeline.Samples) == 0 {
		return "", false, nil
	}
	p := newPlot("misattributed errors and dead-session requests (running totals)", "seconds since start", "count")
	yMax := 1.0
	type line struct {
		pts   plotter.XYs
		label string
		color color.Color
		dash  bool
	}
	var lines []line
	for i, g := range e.Groups {
		for _, c := range []struct {
			counter string
			dash    bool
		}{{"misattributed_errors", false}, {"dead_session_requests", true}} {
			l := line{label: g.Name + " " + c.counter, color: groupColor(i), dash: c.dash}
			for _, s := range e.Timeline.Samples {
				v := float64(s.Groups[g.Name].Counters[c.counter])
				l.pts = append(l.pts, plotter.XY{X: s.TS, Y: v})
				yMax = math.Max(yMax, v)
			}
			lines = append(lines, l)
		}
	}
	yMax *= 1.05
	if err := shadeFaults(p, faultWindows(e), yMax); err != nil {
		return "", false, err
	}
	for _, ln := range lines {
		l, err := plotter.NewLine(ln.pts)
		if err != nil {
			return "", false, err
		}
		l.Color = ln.color
		l.Width = vg.Points(1.5)
		if ln.dash {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(l)
		p.Legend.Add(ln.label, l)
	}
	p.Y.Min, p.Y.Max = 0, yMax
	p.X.Min = 0
	s, err := svg(p, 8.5*vg.Inch, 3*vg.Inch)
	return s, true, err
}

// trendMetrics are plotted across runs.
var trendMetrics = []string{
	"misattributed_errors", "retry_amplification", "stale_events_applied",
	"probe_latency.p99", "tool_call_latency.p99", "false_healthy_seconds",
}

// trendPlot draws one metric per group across runs (x: run number, oldest first).
func trendPlot(runs []Run, metric string) (string, error) {
	m, err := results.ParseMetric(metric)
	if err != nil {
		return "", err
	}
	unit := m.Unit()
	yLabel := "count"
	scale := 1.0
	switch {
	case metric == "false_healthy_seconds":
		yLabel, scale = "seconds", 1e6
	case unit == results.UnitDuration:
		yLabel, scale = "ms", 1000
	case unit == results.UnitRatio:
		yLabel = "ratio"
	}
	p := newPlot(metric+" across runs", "run", yLabel)
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
	var ticks []plot.Tick
	for i := range runs {
		ticks = append(ticks, plot.Tick{Value: float64(i + 1), Label: fmt.Sprintf("#%d", i+1)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	for _, name := range names {
		var pts plotter.XYs
		for i, r := range runs {
			g := r.Export.Group(name)
			if g == nil {
				continue
			}
			if v, ok := m.Value(g); ok {
				pts = append(pts, plotter.XY{X: float64(i + 1), Y: v / scale})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return "", err
		}
		l.Color = groupColor(seen[name])
		s.Color = groupColor(seen[name])
		p.Add(l, s)
		p.Legend.Add(name, l, s)
	}
	p.X.Min, p.X.Max = 0.5, float64(len(runs))+0.5
	p.Y.Min = 0
	if p.Y.Max <= 0 {
		p.Y.Max = 1 // all zero: a flat line at the bottom, not in the middle of -1..1
	}
	return svg(p, 5.2*vg.Inch, 2.6*vg.Inch)
}
