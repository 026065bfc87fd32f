package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/compare"
)

// verdict is what the report says first: how the latest run did against its thresholds, the
// earlier good runs of its workload, and the hazards it found.
type verdict struct {
	Bad                  bool
	Word                 string // the verdict word: compare's for the same runs
	Class                string // its style: pass, muted (inconclusive), fail
	Headline             string
	N                    int
	File, Labels, Status string
	ThresholdsTotal      int
	ThresholdsFailed     []results.ThresholdResult
	Baselines            int
	Regressions          []string
	Hazards              []hazard
	NotGood              []string
}

type hazard struct {
	Text    string
	Control bool // found in a control group, which is there to show it
}

// baselineRuns is how many earlier good runs the verdict compares the latest with.
const baselineRuns = 5

// hazardCounters are the counters that say a hazard happened, with how to say it.
var hazardCounters = []struct{ counter, words string }{
	{"misattributed_errors", "misattributed errors"},
	{"stale_events_applied", "stale events applied"},
	{"reinit_collisions", "re-init collisions"},
	{"retries_against_dead", "retries against dead sessions"},
}

// verdictOf judges the latest of runs (sorted oldest first).
func verdictOf(runs []Run) verdict {
	n := len(runs)
	last := runs[n-1]
	e := last.Export
	v := verdict{N: n, File: last.File, Labels: results.FormatLabels(e.Run.Labels), Status: results.RunStatus(e),
		ThresholdsTotal: len(e.Thresholds)}
	for _, t := range e.Thresholds {
		if !t.Pass {
			v.ThresholdsFailed = append(v.ThresholdsFailed, t)
		}
	}
	var bases []results.Part
	for i := n - 2; i >= 0 && len(bases) < baselineRuns; i-- {
		r := runs[i]
		if results.Good(r.Export) && compare.Comparable(results.Part{File: r.File, Export: r.Export}, results.Part{File: last.File, Export: e}) == nil {
			bases = append(bases, results.Part{File: r.File, Export: r.Export})
		}
	}
	for i, r := range runs {
		if !results.Good(r.Export) {
			v.NotGood = append(v.NotGood, fmt.Sprintf("#%d %s: %s", i+1, r.File, results.RunStatus(r.Export)))
		}
	}
	var c *compare.Comparison
	if len(bases) > 0 && results.Good(e) {
		v.Baselines = len(bases)
		c = compare.Baseline(bases, results.Part{File: last.File, Export: e}, gate.DefaultTolerances())
		for _, r := range c.Rows {
			if r.Verdict == compare.VerdictRegressed {
				v.Regressions = append(v.Regressions, regressionText(r))
			}
		}
	}
	v.Hazards = hazardsOf(e)
	v.Word, v.Headline = headline(v, e, c)
	v.Bad = v.Word == compare.OutcomeRegressed || v.Word == compare.OutcomeCouldNotRun
	v.Class = map[string]string{compare.OutcomeOK: "pass", compare.OutcomeInconclusive: "muted"}[v.Word]
	if v.Class == "" {
		v.Class = "fail"
	}
	return v
}

// headline is the report's verdict: the word compare says for the same runs (ok, regressed,
// inconclusive, could not run), and what it rests on. Without earlier good runs to compare
// with, hazards outside control groups make it regressed, as nothing says they are not new.
func headline(v verdict, e *results.Export, c *compare.Comparison) (word, text string) {
	var why []string
	if k := len(v.ThresholdsFailed); k > 0 {
		why = append(why, words.Count(k, "threshold")+" failed")
	}
	if k := len(v.Regressions); k > 0 {
		why = append(why, words.Count(k, "regression"))
	}
	if c == nil {
		for _, h := range v.Hazards {
			if !h.Control {
				why = append(why, "hazards found outside control groups")
				break
			}
		}
	}
	switch {
	case e.Run.Error != "" || e.Run.Interrupted:
		return compare.OutcomeCouldNotRun, "could not run: the latest run did not complete"
	case e.Run.Aborted != "":
		return compare.OutcomeRegressed, "regressed: the latest run was aborted by its own threshold"
	case len(why) > 0:
		return compare.OutcomeRegressed, "regressed: " + strings.Join(why, ", ")
	case c != nil && c.Outcome != compare.OutcomeOK:
		return c.Outcome, strings.TrimPrefix(c.Verdict(), "verdict: ")
	case c != nil && c.Inconclusive > 0:
		return compare.OutcomeOK, "ok: no regression; timing rows held back (the runner was starved), the server's latency judged by its floor"
	case c == nil:
		return compare.OutcomeOK, "ok: its thresholds held (no earlier good run to compare with)"
	}
	return compare.OutcomeOK, "ok: no regression"
}

func regressionText(r compare.Row) string {
	s := fmt.Sprintf("%s %s", r.Group, r.Metric)
	m, err := gate.ParseMetric(r.Metric)
	if err == nil && r.Base != nil && r.Current != nil {
		s += fmt.Sprintf(": %s → %s", m.Format(*r.Base), m.Format(*r.Current))
	}
	if r.Note != "" {
		s += " (" + r.Note + ")"
	}
	return s
}

// hazardsOf lists, per group, the hazard counters that are not zero.
func hazardsOf(e *results.Export) []hazard {
	var hs []hazard
	for _, g := range e.Groups {
		var parts []string
		for _, hc := range hazardCounters {
			if n := g.Counters[hc.counter]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, hc.words))
			}
		}
		if len(parts) == 0 {
			continue
		}
		control := slices.Contains(compare.ControlPolicies, g.Policy)
		who := fmt.Sprintf("group %s (policy %s)", g.Name, g.Policy)
		if control {
			who += ", a control: the fault reached the server's weak spot"
		}
		hs = append(hs, hazard{Text: who + ": " + strings.Join(parts, ", "), Control: control})
	}
	return hs
}
