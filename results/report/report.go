// Package report writes the HTML report of one or more runs: one self-contained file that
// works offline (no script, no stylesheet or font from the network). It shows each run's
// thresholds, counters per group side by side, latency percentile curves (HdrHistogram style,
// log scale), the session-state timeline with fault windows marked, and, given several runs,
// trends across them. It opens with the verdict (thresholds, regressions against the earlier
// good runs, hazards found) before any detail. Plots are inline SVG written directly (svg.go).
//
// It reads exports, and the interval logs (package hlog) its caller read beside them; it never
// runs anything.
package report

import (
	"fmt"
	"github.com/mcpchaos/mcpchaos/gate"
	"html/template"
	"io"
	"sort"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/hlog"
)

// Run is one export to report on, with the file it came from.
type Run struct {
	File   string
	Export *results.Export
	// Intervals are the run's interval logs by histogram name (run --hlog), for the plots of
	// latency over time; nil: none.
	Intervals map[string]*hlog.Log
}

// Options adjusts the report.
type Options struct {
	Title     string    // default "mcpchaos report"
	Generated time.Time // shown in the footer; default now
	Version   string    // the mcpchaos version writing the report
}

// Write writes the report of runs (shown oldest first, by start time) to w.
func Write(w io.Writer, runs []Run, opts Options) error {
	if len(runs) == 0 {
		return fmt.Errorf("no runs to report on")
	}
	runs = append([]Run(nil), runs...)
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Export.Run.Start.Before(runs[j].Export.Run.Start) })
	if opts.Title == "" {
		opts.Title = "mcpchaos report"
	}
	if opts.Generated.IsZero() {
		opts.Generated = time.Now()
	}
	page := pageData{
		Title:     opts.Title,
		Generated: opts.Generated.UTC().Format(time.RFC3339),
		Version:   opts.Version,
		Verdict:   verdictOf(runs),
	}
	workloads := map[string]bool{}
	for i, r := range runs {
		rv, err := runView(i+1, r, i == len(runs)-1)
		if err != nil {
			return fmt.Errorf("%s: %w", r.File, err)
		}
		page.Runs = append(page.Runs, rv)
		workloads[r.Export.Run.Workload+" "+r.Export.Run.WorkloadHash] = true
	}
	page.MixedWorkloads = len(workloads) > 1
	if len(runs) > 1 {
		for _, m := range trendMetrics {
			s, err := trendPlot(runs, m)
			if err != nil {
				return err
			}
			page.Trends = append(page.Trends, template.HTML(s))
		}
	}
	return pageTemplate.Execute(w, page)
}

type pageData struct {
	Title, Generated, Version string
	Verdict                   verdict
	Runs                      []runData
	Trends                    []template.HTML
	MixedWorkloads            bool
}

type runData struct {
	N                      int
	File, Workload, Hash   string
	Labels                 string
	Start, Duration        string
	Status                 string
	Bad                    bool
	Open                   bool
	Shards                 string
	ThresholdsPass, Failed int
	Thresholds             []results.ThresholdResult
	Groups                 []string
	Counters               []tableRow
	Latencies              []tableRow
	LatencyPlots           []template.HTML
	OverTime               []template.HTML
	OverTimeNote           string
	EmptyHists             []string
	Timelines              []template.HTML
	Damage                 template.HTML
	Faults                 []faultWindow
	NoTimeline             bool
	Notes                  []string
	Steady                 *steadyView // steady.go
}

type tableRow struct {
	Label  string
	Values []string
}

// counterRows are the rows of the side-by-side counter table.
var counterRows = []struct{ label, metric string }{
	{"clients", "clients"},
	{"sessions started", "sessions_started"},
	{"drops", "drops"},
	{"replays 200", "replays_ok"},
	{"replays dead", "replays_dead"},
	{"replays refused (unknown cursor)", "replays_unknown_cursor"},
	{"probes sent", "probes_sent"},
	{"sessions dead (ran into)", "sessions_dead"},
	{"deaths detected as such", "sessions_dead_detected"},
	{"misattributed errors", "misattributed_errors"},
	{"live sessions declared dead", "live_sessions_declared_dead"},
	{"dead-session requests", "dead_session_requests"},
	{"  of them retries", "retries_against_dead"},
	{"retry amplification", "retry_amplification"},
	{"stale events applied", "stale_events_applied"},
	{"events quarantined", "events_quarantined"},
	{"re-init collisions", "reinit_collisions"},
	{"resyncs", "resyncs"},
	{"reconnects refused (stream held)", "reconnects_refused"},
	{"false-healthy time", "false_healthy_seconds"},
	{"tool calls ok", "tool_calls_ok"},
	{"tool calls failed", "tool_calls_failed"},
	{"transport errors", "errors"},
	// The library failures (client library groups; zero for naive and probe).
	{"library calls hung", "calls_hung"},
	{"replayed answers delivered", "replayed_errors_delivered"},
	{"background requests to dead sessions", "dead_session_background_requests"},
	{"listeners silently dead", "listeners_silently_dead"},
	{"deaths misclassified", "errors_misclassified"},
	{"silent substitutions", "silent_substitutions"},
}

// withheld is v, or the mark of a figure the run withheld (not applicable, estimate refuted).
func withheld(e *results.Export, group, metric, v string) string {
	switch why := e.WithheldWhy(group, metric); why {
	case "":
		return v
	case results.NotApplicable:
		return "n/a"
	default:
		return "withheld (" + why + ")"
	}
}

// counterTable is the counters' rows of a run: one per counterRows entry, a value per group.
func counterTable(e *results.Export, groups []*results.Group) ([]tableRow, error) {
	var rows []tableRow
	for _, row := range counterRows {
		m, err := gate.ParseMetric(row.metric)
		if err != nil {
			return nil, err
		}
		tr := tableRow{Label: row.label}
		for _, g := range groups {
			v, _ := results.Value(m, g)
			tr.Values = append(tr.Values, withheld(e, g.Name, row.metric, m.Format(v)))
		}
		rows = append(rows, tr)
	}
	return rows, nil
}

// latencyCell is one group's histogram h in the latency table: p50 / p99 / max (count), "–"
// when empty, or why it is withheld.
func latencyCell(e *results.Export, g *results.Group, h string) string {
	if why := e.WithheldWhy(g.Name, h); why != "" {
		return withheld(e, g.Name, h, "")
	}
	hs := g.Histograms[h]
	if hs.Count == 0 {
		return "–"
	}
	m, _ := gate.ParseMetric(h + ".max")
	d := func(us int64) string { return m.Format(float64(us)) }
	return fmt.Sprintf("%s / %s / %s (%d)", d(hs.P50US), d(hs.P99US), d(hs.MaxUS), hs.Count)
}

func runView(n int, r Run, open bool) (runData, error) {
	e := r.Export
	rd := runData{
		N: n, File: r.File, Workload: e.Run.Workload, Hash: e.Run.WorkloadHash,
		Start:    e.Run.Start.UTC().Format("2006-01-02 15:04:05Z"),
		Duration: e.Run.End.Sub(e.Run.Start).Round(10 * time.Millisecond).String(),
		Open:     open, Thresholds: e.Thresholds, Faults: faultWindows(e), Notes: e.Run.Notes,
		Labels: results.FormatLabels(e.Run.Labels), Status: results.RunStatus(e), Bad: !results.Good(e),
		Steady: steadyOf(e),
	}
	switch {
	case e.Run.Shard != nil:
		rd.Shards = "shard " + e.Run.Shard.String()
	case len(e.Run.MergedShards) > 0:
		rd.Shards = fmt.Sprintf("merged from %d shards", len(e.Run.MergedShards))
	}
	rd.Failed = results.Failed(e.Thresholds)
	rd.ThresholdsPass = len(e.Thresholds) - rd.Failed
	groups := make([]*results.Group, 0, len(e.Groups)+1)
	for i := range e.Groups {
		groups = append(groups, &e.Groups[i])
		rd.Groups = append(rd.Groups, e.Groups[i].Name+" ("+e.Groups[i].Policy+")")
	}
	groups = append(groups, &e.Overall)
	rd.Groups = append(rd.Groups, "overall")
	var err error
	if rd.Counters, err = counterTable(e, groups); err != nil {
		return rd, err
	}
	for _, h := range metrics.Hists() {
		tr := tableRow{Label: h.String() + " p50 / p99 / max (n)"}
		for _, g := range groups {
			tr.Values = append(tr.Values, latencyCell(e, g, h.String()))
		}
		rd.Latencies = append(rd.Latencies, tr)
		s, ok, err := latencyPlot(e, h.String())
		if err != nil {
			return rd, err
		}
		if ok {
			rd.LatencyPlots = append(rd.LatencyPlots, template.HTML(s))
		} else {
			rd.EmptyHists = append(rd.EmptyHists, h.String())
		}
		if s, ok := latencyOverTimePlot(e, h.String(), r.Intervals[h.String()]); ok {
			rd.OverTime = append(rd.OverTime, template.HTML(s))
		}
	}
	rd.OverTimeNote = overTimeNote(r)
	for _, g := range e.Groups {
		s, ok, err := timelinePlot(e, g.Name)
		if err != nil {
			return rd, err
		}
		if ok {
			rd.Timelines = append(rd.Timelines, template.HTML(s))
		}
	}
	rd.NoTimeline = len(rd.Timelines) == 0
	if s, ok, err := damagePlot(e); err != nil {
		return rd, err
	} else if ok {
		rd.Damage = template.HTML(s)
	}
	return rd, nil
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5rem auto; max-width: 72rem; padding: 0 1rem; color: #1b1b1b; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { font-size: 1.25rem; margin-top: 2rem; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05rem; margin-top: 1.4rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #d5d5d5; padding: .25rem .6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f2f2f2; }
.pass { color: #17661b; font-weight: bold; }
.fail { color: #b3131b; font-weight: bold; }
.muted { color: #666; font-size: .85rem; }
.warn { background: #fff4d6; border: 1px solid #e8c66b; padding: .5rem .8rem; }
svg.plot { max-width: 100%; height: auto; display: block; margin: .5rem 0 1rem; font-family: "Liberation Sans", Arial, Helvetica, sans-serif; }
.verdict { border: 2px solid #17661b; padding: .6rem 1rem; margin: 1rem 0; }
.verdict.bad { border-color: #b3131b; }
.verdict h2 { margin-top: 0; border: none; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(28rem, 1fr)); gap: .5rem 1rem; }
details > summary { cursor: pointer; font-size: 1.2rem; font-weight: bold; margin-top: 1.5rem; }
code { font-size: .85rem; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="muted">{{len .Runs}} run{{if gt (len .Runs) 1}}s{{end}}. Generated {{.Generated}}{{if .Version}} by mcpchaos {{.Version}}{{end}}.</p>
{{if .MixedWorkloads}}<p class="warn">These runs are of different workloads (or different versions of one workload file): their numbers measure different experiments.</p>{{end}}

{{with .Verdict}}<section class="verdict{{if .Bad}} bad{{end}}">
<h2>Verdict: <span class="{{.Class}}">{{.Headline}}</span></h2>
<p>Latest run #{{.N}} <code>{{.File}}</code>{{if .Labels}} ({{.Labels}}){{end}}: {{.Status}}.</p>
<ul>
<li>Thresholds: {{if .ThresholdsTotal}}{{if .ThresholdsFailed}}<span class="fail">{{len .ThresholdsFailed}} of {{.ThresholdsTotal}} failed</span>{{range .ThresholdsFailed}}<br><code>{{.Expr}}</code>: actual {{.Actual}}{{end}}{{else}}<span class="pass">all {{.ThresholdsTotal}} passed</span>{{end}}{{else}}<span class="muted">the workload sets none</span>{{end}}</li>
<li>Regressions: {{if .Baselines}}{{if .Regressions}}<span class="fail">{{len .Regressions}} against the {{.Baselines}} earlier good run{{if gt .Baselines 1}}s{{end}}</span>{{range .Regressions}}<br>{{.}}{{end}}{{else}}<span class="pass">none against the {{.Baselines}} earlier good run{{if gt .Baselines 1}}s{{end}}</span> (mcpchaos compare, default tolerances){{end}}{{else}}<span class="muted">no earlier good run of this workload to compare with</span>{{end}}</li>
<li>Hazards found: {{if .Hazards}}{{range .Hazards}}<br><span class="{{if .Control}}muted{{else}}fail{{end}}">{{.Text}}</span>{{end}}{{else}}<span class="pass">none</span>{{end}}</li>
{{if .NotGood}}<li>Runs that did not complete (not drawn in the trends, left out of the baseline): {{range .NotGood}}<br><span class="fail">{{.}}</span>{{end}}</li>{{end}}
</ul>
</section>{{end}}

<h2>Runs</h2>
<table>
<thead><tr><th>#</th><th>file</th><th>workload</th><th>start (UTC)</th><th>duration</th><th>status</th><th>thresholds</th></tr></thead>
<tbody>
{{range .Runs}}<tr><td>{{.N}}</td><td><code>{{.File}}</code>{{if .Labels}}<br><span class="muted">{{.Labels}}</span>{{end}}</td><td>{{.Workload}}{{if .Shards}} <span class="muted">({{.Shards}})</span>{{end}}</td><td>{{.Start}}</td><td>{{.Duration}}</td><td{{if .Bad}} class="fail"{{end}}>{{.Status}}</td><td>{{if .Thresholds}}{{if .Failed}}<span class="fail">{{.Failed}} failed</span>{{else}}<span class="pass">all {{.ThresholdsPass}} passed</span>{{end}}{{else}}<span class="muted">none</span>{{end}}</td></tr>
{{end}}</tbody>
</table>

{{if .Trends}}
<h2>Trends across runs</h2>
<p class="muted">One point per run, oldest (#1) first, labelled with the run's labels; one line per client group. A run that failed, was interrupted or aborted is a red band and a gap: its numbers are not drawn.</p>
<div class="grid">
{{range .Trends}}<div>{{.}}</div>
{{end}}</div>
{{end}}

{{range .Runs}}
<details{{if .Open}} open{{end}}>
<summary>Run #{{.N}}: {{.Workload}}, {{.Start}}</summary>
<p class="muted"><code>{{.File}}</code>{{if .Labels}} · {{.Labels}}{{end}} · workload hash <code>{{.Hash}}</code> · {{.Duration}} · {{.Status}}{{if .Shards}} · {{.Shards}}{{end}}</p>

{{if .Notes}}<ul class="muted">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}

<h3>Thresholds</h3>
{{if .Thresholds}}<table>
<thead><tr><th>threshold</th><th>actual</th><th>verdict</th></tr></thead>
<tbody>
{{range .Thresholds}}<tr><td><code>{{.Expr}}</code></td><td>{{.Actual}}</td><td>{{if .Pass}}<span class="pass">pass</span>{{else}}<span class="fail">FAIL{{if .AbortedRun}} (aborted the run){{end}}</span>{{end}}</td></tr>
{{end}}</tbody>
</table>{{else}}<p class="muted">The workload sets no thresholds.</p>{{end}}
{{template "steady" .Steady}}

<h3>Counters per group</h3>
<table>
<thead><tr><th></th>{{range .Groups}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Counters}}<tr><td>{{.Label}}</td>{{range .Values}}<td>{{.}}</td>{{end}}</tr>
{{end}}{{range .Latencies}}<tr><td>{{.Label}}</td>{{range .Values}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table>

<h3>Session states over the run</h3>
{{if .Faults}}<p class="muted">Shaded: fault windows ({{range $i, $f := .Faults}}{{if $i}}, {{end}}{{$f.Name}} {{printf "%.1f" $f.Start}}s–{{printf "%.1f" $f.End}}s{{end}}).</p>{{end}}
{{if .NoTimeline}}<p class="muted">This export has no timeline (it was written by an mcpchaos older than schema version 2).</p>{{end}}
{{range .Timelines}}{{.}}
{{end}}{{if .Damage}}{{.Damage}}{{end}}

<h3>Latency by percentile</h3>
<p class="muted">HdrHistogram style: the x axis stretches the tail (90%, 99%, 99.9%, ...) on a log scale.</p>
{{range .LatencyPlots}}{{.}}
{{end}}{{if .EmptyHists}}<p class="muted">No samples: {{range $i, $h := .EmptyHists}}{{if $i}}, {{end}}{{$h}}{{end}}.</p>{{end}}

<h3>Latency over time</h3>
<p class="muted">{{.OverTimeNote}}</p>
{{range .OverTime}}{{.}}
{{end}}</details>
{{end}}
<p class="muted">Written by mcpchaos report. This file is self-contained: it loads nothing from the network. Every number is defined in docs/metrics.md of the mcpchaos repository.</p>
</body>
</html>
`))

// Name and its siblings expose faultWindow to the template.
func (w faultWindow) Name() string   { return w.name }
func (w faultWindow) Start() float64 { return w.start }
func (w faultWindow) End() float64   { return w.end }
