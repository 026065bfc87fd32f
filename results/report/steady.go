package report

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/mcpchaos/mcpchaos/results"
)

// steadyView is a run's steady state and rollbacks as the report shows them.
type steadyView struct {
	Title, Verdict string
	Steady         bool
	Probes         []probeView
	Rollbacks      []rollbackView
}

type probeView struct {
	Name, Kind, When, Tolerance, Runs, Verdict, Why string
	Fail                                            bool
}

type rollbackView struct {
	Name, Kind, Detail, Error string
}

// steadyOf is nil when the run had neither probes nor rollbacks.
func steadyOf(e *results.Export) *steadyView {
	if e.SteadyState == nil && len(e.Rollbacks) == 0 {
		return nil
	}
	v := &steadyView{Steady: true}
	if s := e.SteadyState; s != nil {
		v.Title, v.Steady, v.Verdict = s.Title, s.IsSteady(), "steady"
		switch s.Verdict {
		case results.NotSteadyBefore:
			v.Verdict = "not steady before the run: no fault was started"
		case results.NotSteady:
			v.Verdict = "NOT STEADY"
		}
		for _, p := range s.Probes {
			pv := probeView{Name: p.Name, Kind: p.Kind, When: strings.Join(p.When, ", "), Tolerance: p.Tolerance,
				Verdict: p.Verdict, Fail: p.Verdict == results.ProbeFail}
			if p.During != "" {
				pv.When += " (" + p.During + ")"
			}
			pass := 0
			for _, r := range p.Runs {
				if r.Pass {
					pass++
				} else if pv.Why == "" {
					pv.Why = fmt.Sprintf("%s at %.1fs: %s", r.When, r.AtS, r.Why)
				}
			}
			pv.Runs = fmt.Sprintf("%d of %d passed", pass, len(p.Runs))
			v.Probes = append(v.Probes, pv)
		}
	}
	for _, r := range e.Rollbacks {
		v.Rollbacks = append(v.Rollbacks, rollbackView{Name: r.Action, Kind: r.Kind, Detail: r.Detail, Error: r.Error})
	}
	return v
}

const steadyTemplate = `{{define "steady"}}{{with .}}
<h3>Steady state{{if .Title}}: {{.Title}}{{end}}</h3>
{{if .Probes}}<p>{{if .Steady}}<span class="pass">{{.Verdict}}</span>{{else}}<span class="fail">{{.Verdict}}</span>{{end}}</p>
<table>
<thead><tr><th>probe</th><th>kind</th><th>when</th><th>tolerance</th><th>runs</th><th>verdict</th></tr></thead>
<tbody>
{{range .Probes}}<tr><td><code>{{.Name}}</code></td><td>{{.Kind}}</td><td>{{.When}}</td><td>{{if .Tolerance}}<code>{{.Tolerance}}</code>{{end}}</td><td>{{.Runs}}</td><td>{{if .Fail}}<span class="fail">FAIL</span><br>{{.Why}}{{else}}{{.Verdict}}{{end}}</td></tr>
{{end}}</tbody>
</table>{{else}}<p class="muted">The workload has no steady-state probes.</p>{{end}}
{{if .Rollbacks}}<h3>Rollbacks</h3>
<table>
<thead><tr><th>rollback</th><th>kind</th><th>what happened</th></tr></thead>
<tbody>
{{range .Rollbacks}}<tr><td><code>{{.Name}}</code></td><td>{{.Kind}}</td><td>{{if .Error}}<span class="fail">FAIL</span> {{.Error}}{{else}}{{.Detail}}{{end}}</td></tr>
{{end}}</tbody>
</table>{{end}}
{{end}}{{end}}`

func init() { template.Must(pageTemplate.Parse(steadyTemplate)) }
