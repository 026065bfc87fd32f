package compare

import "github.com/mcpchaos/mcpchaos/results"

import "fmt"

// compareProbes adds a row per steady-state probe recorded in any run, judged as thresholds
// are: a probe that passed in every baseline and fails now is a regression; one that failed in
// some baselines is flaky there and only reported.
func (c *Comparison) compareProbes(bases []results.Part, cur *results.Export) {
	type tally struct {
		pass, fail int
		cur        *results.SteadyProbe
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
			case results.ProbePass:
				t.pass++
			case results.ProbeFail:
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

func probeRow(name string, pass, fail int, cur *results.SteadyProbe) Row {
	if cur == nil || cur.Verdict == results.ProbeNotRun {
		return mustKeepPassing("steady_state", name, pass, fail, nil, "")
	}
	ok := cur.Verdict == results.ProbePass
	why := ""
	if !ok {
		why = cur.FirstFailure()
	}
	return mustKeepPassing("steady_state", name, pass, fail, &ok, why)
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
