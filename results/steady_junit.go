package results

import (
	"fmt"
	"strconv"
	"strings"
)

// steadyCases are the JUnit test cases of the steady state and the rollbacks: one per probe
// (failing when any run of it failed, skipped-as-failure never: a probe that did not run
// passes with a note), and one per rollback.
func steadyCases(e *Export, class string) []JUnitCase {
	var out []JUnitCase
	if s := e.SteadyState; s != nil {
		for _, p := range s.Probes {
			took := 0.0
			var lines []string
			for _, r := range p.Runs {
				took += r.TookS
				line := fmt.Sprintf("%s at %.1fs: %s", r.When, r.AtS, r.Detail)
				if !r.Pass {
					line += " FAILED: " + r.Why
				}
				lines = append(lines, line)
			}
			for _, sk := range p.Skipped {
				lines = append(lines, sk.When+" not run: "+sk.Why)
			}
			c := JUnitCase{Name: "steady state: " + p.Name, Classname: class, Time: strconv.FormatFloat(took, 'f', 3, 64),
				SystemOut: strings.Join(lines, "\n")}
			if p.Verdict == ProbeFail {
				msg := "probe " + p.Name + " failed: " + p.FirstFailure()
				c.Failure = &JUnitFailure{Message: msg, Type: "steady_state", Text: msg}
			}
			out = append(out, c)
		}
		if s.Verdict == NotSteadyBefore {
			msg := "the system was not steady before the run (a before probe failed): no fault was started"
			out = append(out, JUnitCase{Name: "steady state before the run", Classname: class, Time: "0",
				Failure: &JUnitFailure{Message: msg, Type: "steady_state", Text: msg}})
		}
	}
	for _, r := range e.Rollbacks {
		c := JUnitCase{Name: "rollback: " + r.Action, Classname: class, Time: strconv.FormatFloat(r.EndedAtS-r.StartedAtS, 'f', 3, 64), SystemOut: r.Detail}
		if r.Error != "" {
			msg := "rollback " + r.Action + " failed: " + r.Error
			c.Failure = &JUnitFailure{Message: msg, Type: "rollback", Text: msg}
		}
		out = append(out, c)
	}
	return out
}

// FirstFailure says the probe's first failed run: when, at what second, and why.
func (p SteadyProbe) FirstFailure() string {
	for _, r := range p.Runs {
		if !r.Pass {
			return fmt.Sprintf("%s at %.1fs: %s", r.When, r.AtS, r.Why)
		}
	}
	return ""
}
