package results

import "fmt"

// compareProbes adds a row per steady-state probe recorded in any run, judged as thresholds
// are: a probe that passed in every baseline and fails now is a regression; one that failed in
// some baselines is flaky there and only reported.
func (c *Comparison) compareProbes(bases []Part, cur *Export) {
	type tally struct {
		pass, fail int
		cur        *SteadyProbe
	}
	var order []string
	by := map[string]*tally{}
	get := func(name string) *tally {
		t := by[name]
		if t == nil {
			t = &tally{}
			by[name] = t
			order = append(order, name)
		}
		return t
	}
	for _, b := range bases {
		if b.Export.SteadyState == nil {
			continue
		}
		for _, p := range b.Export.SteadyState.Probes {
			t := get(p.Name)
			switch p.Verdict {
			case ProbePass:
				t.pass++
			case ProbeFail:
				t.fail++
			}
		}
	}
	if cur.SteadyState != nil {
		for i := range cur.SteadyState.Probes {
			get(cur.SteadyState.Probes[i].Name).cur = &cur.SteadyState.Probes[i]
		}
	}
	for _, name := range order {
		row := probeRow(name, by[name].pass, by[name].fail, by[name].cur)
		c.count(row)
		c.Rows = append(c.Rows, row)
	}
}

func probeRow(name string, pass, fail int, cur *SteadyProbe) Row {
	row := Row{Group: "steady_state", Metric: name, Unit: "pass", Tolerance: "must keep passing"}
	one := func(b bool) *float64 {
		v := 0.0
		if b {
			v = 1
		}
		return &v
	}
	if pass+fail > 0 {
		row.Base = one(fail == 0)
	}
	if cur != nil && cur.Verdict != ProbeNotRun {
		row.Current = one(cur.Verdict == ProbePass)
	}
	switch {
	case row.Base == nil || row.Current == nil:
		row.Verdict = VerdictMissing
	case fail > 0 && pass > 0:
		row.Verdict = VerdictInfo
		row.Note = fmt.Sprintf("failed in %d of %d baselines: not judged", fail, pass+fail)
	case fail == 0 && cur.Verdict == ProbeFail:
		row.Verdict = VerdictRegressed
		row.Note = "now fails: " + firstFailure(*cur)
	case pass == 0 && cur.Verdict == ProbePass:
		row.Verdict = VerdictImproved
	case cur.Verdict == ProbeFail:
		row.Verdict = VerdictSame
		row.Note = "fails in both"
	default:
		row.Verdict = VerdictSame
	}
	return row
}

// probeFindings says in words which steady-state probes passed in every baseline and fail now.
func probeFindings(c *Comparison) []string {
	var out []string
	for _, r := range c.Rows {
		if r.Group == "steady_state" && r.Verdict == VerdictRegressed {
			out = append(out, fmt.Sprintf("the system is no longer steady: probe %s passed in every baseline and %s", r.Metric, r.Note))
		}
	}
	return out
}
