package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// A line chart written directly as SVG: axes with ticks, shaded x-bands, lines with optional
// dashes and markers, and a legend in a column of its own (so that it never hides a line).
// The report needs four kinds of line plot and nothing else; a plotting library with its own
// fonts and back-ends cost 8 MB of the binary for them (issue 12, item 8). Text is set by the
// page's CSS, so nothing is measured: the legend column is wide enough for its labels.

// chart is one plot. Coordinates are in data units; NaN in a series breaks its line.
type chart struct {
	Title, XLabel, YLabel string
	Width, Height         float64 // pixels
	XLog                  bool    // log10 x axis (values > 0)
	XMin, XMax            float64
	YMin, YMax            float64
	XTicks                []tick // nil: chosen from the range
	// XTickSlant sets the x tick labels at a slant, for long labels (a run's labels), with
	// room below the plot for them.
	XTickSlant bool
	Bands      []band
	Series     []series
}

type tick struct {
	V     float64
	Label string
}

// band shades x from X0 to X1 over the whole plot height; a label is written at its top.
type band struct {
	X0, X1 float64
	Fill   string // CSS colour
	Label  string // in the legend
	Note   string // written inside the band, at its top (e.g. "failed")
}

type series struct {
	Label   string
	Color   string
	Dash    string // SVG stroke-dasharray, "" for solid
	Markers bool
	X, Y    []float64
}

const (
	marginLeft   = 64.0
	marginTop    = 30.0
	marginBottom = 44.0
	legendWidth  = 210.0
)

func (c *chart) plotArea() (x0, y0, x1, y1 float64) {
	bottom := marginBottom
	if c.XTickSlant {
		bottom += slantRoom
	}
	return marginLeft, marginTop, c.Width - legendWidth, c.Height - bottom
}

// slantRoom is the extra room below the plot for slanted tick labels.
const slantRoom = 70.0

func (c *chart) xPos(v float64) float64 {
	x0, _, x1, _ := c.plotArea()
	lo, hi, v := c.XMin, c.XMax, v
	if c.XLog {
		lo, hi, v = math.Log10(lo), math.Log10(hi), math.Log10(v)
	}
	if hi == lo {
		return (x0 + x1) / 2
	}
	return x0 + (v-lo)/(hi-lo)*(x1-x0)
}

func (c *chart) yPos(v float64) float64 {
	_, y0, _, y1 := c.plotArea()
	if c.YMax == c.YMin {
		return y1
	}
	return y1 - (v-c.YMin)/(c.YMax-c.YMin)*(y1-y0)
}

// niceTicks are about n ticks over [lo, hi] at steps of 1, 2 or 5 times a power of ten.
func niceTicks(lo, hi float64, n int) []tick {
	if hi <= lo {
		return []tick{{lo, num(lo)}}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		ts = append(ts, tick{v, num(v)})
	}
	return ts
}

// num writes a tick value without trailing zeros or float noise (0.3, not 0.30000000000000004).
func num(v float64) string {
	if math.Abs(v) < 1e-12 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// render writes the chart as an inline SVG element.
func (c *chart) render() string {
	var b strings.Builder
	x0, y0, x1, y1 := c.plotArea()
	fmt.Fprintf(&b, `<svg class="plot" role="img" viewBox="0 0 %s %s" width="%s" height="%s" font-size="11">`, f1(c.Width), f1(c.Height), f1(c.Width), f1(c.Height))
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%s" height="%s" fill="#fff"/>`, f1(c.Width), f1(c.Height))
	fmt.Fprintf(&b, `<text x="%s" y="18" font-size="13" font-weight="bold" text-anchor="middle">%s</text>`, f1((x0+x1)/2), html.EscapeString(c.Title))
	for _, bd := range c.Bands {
		bx0, bx1 := c.xPos(max(bd.X0, c.XMin)), c.xPos(min(bd.X1, c.XMax))
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, f1(bx0), f1(y0), f1(max(bx1-bx0, 1)), f1(y1-y0), bd.Fill)
		if bd.Note != "" {
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="10" text-anchor="middle" fill="#7a1010">%s</text>`, f1((bx0+bx1)/2), f1(y0+12), html.EscapeString(bd.Note))
		}
	}
	c.axes(&b)
	fmt.Fprintf(&b, `<clipPath id="%s"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath>`, c.clipID(), f1(x0), f1(y0-2), f1(x1-x0), f1(y1-y0+4))
	for _, s := range c.Series {
		c.line(&b, s)
	}
	c.legend(&b)
	b.WriteString(`</svg>`)
	return b.String()
}

// clipID names the plot area's clip path uniquely enough within a page.
func (c *chart) clipID() string {
	h := uint32(2166136261)
	for _, r := range c.Title + c.YLabel {
		h = (h ^ uint32(r)) * 16777619
	}
	return "clip" + strconv.FormatUint(uint64(h), 36)
}

func (c *chart) axes(b *strings.Builder) {
	x0, y0, x1, y1 := c.plotArea()
	for _, t := range niceTicks(c.YMin, c.YMax, 5) {
		y := c.yPos(t.V)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e3e3e3"/>`, f1(x0), f1(y), f1(x1), f1(y))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, f1(x0-5), f1(y), html.EscapeString(t.Label))
	}
	xt := c.XTicks
	if xt == nil {
		xt = niceTicks(c.XMin, c.XMax, 8)
	}
	for _, t := range xt {
		if t.V < c.XMin || t.V > c.XMax {
			continue
		}
		x := c.xPos(t.V)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e3e3e3"/>`, f1(x), f1(y0), f1(x), f1(y1))
		if c.XTickSlant {
			fmt.Fprintf(b, `<text transform="translate(%s %s) rotate(-40)" text-anchor="end" font-size="10">%s</text>`, f1(x+3), f1(y1+12), html.EscapeString(t.Label))
			continue
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, f1(x), f1(y1+14), html.EscapeString(t.Label))
	}
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#444"/>`, f1(x0), f1(y0), f1(x1-x0), f1(y1-y0))
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, f1((x0+x1)/2), f1(c.Height-8), html.EscapeString(c.XLabel))
	fmt.Fprintf(b, `<text transform="translate(14 %s) rotate(-90)" text-anchor="middle">%s</text>`, f1((y0+y1)/2), html.EscapeString(c.YLabel))
}

func (c *chart) line(b *strings.Builder, s series) {
	dash := ""
	if s.Dash != "" {
		dash = ` stroke-dasharray="` + s.Dash + `"`
	}
	var pts []string
	flush := func() {
		if len(pts) > 1 {
			fmt.Fprintf(b, `<polyline clip-path="url(#%s)" fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>`, c.clipID(), s.Color, dash, strings.Join(pts, " "))
		}
		pts = pts[:0]
	}
	for i := range s.X {
		if math.IsNaN(s.Y[i]) || math.IsNaN(s.X[i]) {
			flush()
			continue
		}
		x, y := c.xPos(s.X[i]), c.yPos(s.Y[i])
		pts = append(pts, f1(x)+","+f1(y))
		if s.Markers {
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`, f1(x), f1(y), s.Color)
		}
	}
	flush()
}

func (c *chart) legend(b *strings.Builder) {
	x := c.Width - legendWidth + 12
	y := marginTop + 6
	for _, bd := range c.Bands {
		if bd.Label == "" {
			continue
		}
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="18" height="10" fill="%s"/>`, f1(x), f1(y-5), bd.Fill)
		fmt.Fprintf(b, `<text x="%s" y="%s" dominant-baseline="middle">%s</text>`, f1(x+24), f1(y), html.EscapeString(bd.Label))
		y += 16
	}
	for _, s := range c.Series {
		dash := ""
		if s.Dash != "" {
			dash = ` stroke-dasharray="` + s.Dash + `"`
		}
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"%s/>`, f1(x), f1(y), f1(x+18), f1(y), s.Color, dash)
		fmt.Fprintf(b, `<text x="%s" y="%s" dominant-baseline="middle">%s</text>`, f1(x+24), f1(y), html.EscapeString(s.Label))
		y += 16
	}
}
