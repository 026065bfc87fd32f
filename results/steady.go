package results

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// SteadyState is the export's steady_state section: the workload's steady-state probes, each
// run of each, and whether the system stayed steady (v2, optional).
type SteadyState struct {
	Title string `json:"title,omitempty"`
	// Verdict is Steady (every run of every probe passed), NotSteady (a run failed), or
	// NotSteadyBefore (a before probe failed: the system was not steady when the run began, so
	// the run started no fault and no client).
	Verdict string        `json:"verdict"`
	Probes  []SteadyProbe `json:"probes"`
}

// Verdicts of the steady state.
const (
	Steady          = "steady"
	NotSteady       = "not steady"
	NotSteadyBefore = "not steady before the run"
)

// IsSteady says every run of every probe passed.
func (s *SteadyState) IsSteady() bool { return s.Verdict == Steady }

// SteadyProbe is one probe and its runs.
type SteadyProbe struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"` // http, command, promql
	When      []string `json:"when"` // before, after, continuously, during
	During    string   `json:"during,omitempty"`
	Tolerance string   `json:"tolerance,omitempty"`
	// Verdict is "pass" (every run passed), "fail" (one did not) or "not run" (none ran: the
	// run ended before its turn).
	Verdict string      `json:"verdict"`
	Runs    []ProbeRun  `json:"runs"`
	Skipped []ProbeSkip `json:"skipped,omitempty"`
	// OmittedRuns counts the runs past the most an export keeps of a probe's continuously and
	// during runs (1,000), OmittedFailures those of them that did not pass: one fails the probe.
	OmittedRuns     int `json:"omitted_runs,omitempty"`
	OmittedFailures int `json:"omitted_failures,omitempty"`
}

// ProbeSkip is a turn of a probe that did not run, and why (an interrupted run has no after).
type ProbeSkip struct {
	When string `json:"when"`
	Why  string `json:"why"`
}

// Verdicts of a probe.
const (
	ProbePass   = "pass"
	ProbeFail   = "fail"
	ProbeNotRun = "not run"
)

// ProbeRun is one run of a probe.
type ProbeRun struct {
	When  string   `json:"when"`
	AtS   float64  `json:"at_s"` // from the run's start; negative for a before run
	TookS float64  `json:"took_s"`
	Value *float64 `json:"value,omitempty"`
	// Detail says what was seen ("status 200", "exit 0", "value 12").
	Detail string `json:"detail,omitempty"`
	Pass   bool   `json:"pass"`
	// Why says, for a run that did not pass, what was wrong.
	Why string `json:"why,omitempty"`
}

// Judge sets each probe's verdict and the section's from the runs; a section already judged
// NotSteadyBefore stays so.
func (s *SteadyState) Judge() {
	notBefore := s.Verdict == NotSteadyBefore
	s.Verdict = Steady
	for i := range s.Probes {
		p := &s.Probes[i]
		p.Verdict = ProbeNotRun
		if len(p.Runs) > 0 {
			p.Verdict = ProbePass
		}
		for _, r := range p.Runs {
			if !r.Pass {
				p.Verdict = ProbeFail
			}
		}
		if p.OmittedFailures > 0 {
			p.Verdict = ProbeFail
		}
		if p.Verdict == ProbeFail {
			s.Verdict = NotSteady
		}
	}
	if notBefore {
		s.Verdict = NotSteadyBefore
	}
}

// FailedProbes names each probe that failed, with its first failing run's why.
func (e *Export) FailedProbes() []string {
	if e.SteadyState == nil {
		return nil
	}
	var out []string
	for _, p := range e.SteadyState.Probes {
		if p.Verdict != ProbeFail {
			continue
		}
		for _, r := range p.Runs {
			if !r.Pass {
				out = append(out, fmt.Sprintf("%s (%s, at %.1fs): %s", p.Name, r.When, r.AtS, r.Why))
				break
			}
		}
	}
	return out
}

// FailedRollbacks names each rollback that failed, with why.
func (e *Export) FailedRollbacks() []string {
	var out []string
	for _, r := range e.Rollbacks {
		if r.Error != "" {
			out = append(out, r.Action+": "+r.Error)
		}
	}
	return out
}

// WriteSteadyState prints the probes' verdicts and the rollbacks under the summary; nothing
// when the run had neither.
func WriteSteadyState(w io.Writer, e *Export) {
	if s := e.SteadyState; s != nil {
		title := "steady state"
		if s.Title != "" {
			title += ": " + s.Title
		}
		verdict := "steady"
		switch s.Verdict {
		case NotSteadyBefore:
			verdict = "NOT STEADY before the run: no fault was started"
		case NotSteady:
			verdict = "NOT STEADY"
		}
		fmt.Fprintf(w, "\n%s (%s)\n", title, verdict)
		for _, p := range s.Probes {
			fmt.Fprintf(w, "  %-4s  %-20s %-7s %s\n", verdictMark(p.Verdict), p.Name, p.Kind, probeLine(p))
		}
	}
	if len(e.Rollbacks) > 0 {
		fmt.Fprintf(w, "\nrollbacks:\n")
	}
	for _, r := range e.Rollbacks {
		mark := "ok"
		if r.Error != "" {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %-4s  %s %s: %s\n", mark, r.Kind, r.Action, r.Detail)
	}
}

func verdictMark(v string) string {
	switch v {
	case ProbePass:
		return "ok"
	case ProbeFail:
		return "FAIL"
	}
	return "-"
}

// probeLine sums a probe's runs up: how many passed, and the first failure.
func probeLine(p SteadyProbe) string {
	pass := 0
	var first *ProbeRun
	for i, r := range p.Runs {
		if r.Pass {
			pass++
		} else if first == nil {
			first = &p.Runs[i]
		}
	}
	line := fmt.Sprintf("%d of %d runs passed (%s)", pass, len(p.Runs), strings.Join(p.When, ", "))
	if len(p.Runs) == 0 {
		line = "not run (" + strings.Join(p.When, ", ") + ")"
	}
	if first != nil {
		line += fmt.Sprintf("; %s at %.1fs: %s", first.When, first.AtS, first.Why)
	}
	for _, s := range p.Skipped {
		line += fmt.Sprintf("; %s not run: %s", s.When, s.Why)
	}
	return line
}

// check verifies a steady_state section read from a file.
func (s *SteadyState) check() error {
	if s == nil {
		return nil
	}
	anyFail := false
	seen := map[string]bool{}
	for _, p := range s.Probes {
		anyFail = anyFail || p.Verdict == ProbeFail
		if p.Name == "" || seen[p.Name] {
			return fmt.Errorf("steady_state: probe name %q is empty or repeated", p.Name)
		}
		seen[p.Name] = true
		switch p.Verdict {
		case ProbePass, ProbeFail, ProbeNotRun:
		default:
			return fmt.Errorf("steady_state: probe %s: verdict %q is not pass, fail or not run", p.Name, p.Verdict)
		}
		fails := 0
		for _, r := range p.Runs {
			if !r.Pass {
				fails++
			}
		}
		if (fails > 0) != (p.Verdict == ProbeFail) || (len(p.Runs) == 0) != (p.Verdict == ProbeNotRun) {
			return errors.New("steady_state: probe " + p.Name + ": its verdict disagrees with its runs")
		}
	}
	switch {
	case s.Verdict != Steady && s.Verdict != NotSteady && s.Verdict != NotSteadyBefore:
		return fmt.Errorf("steady_state: verdict %q is not %s, %s or %s", s.Verdict, Steady, NotSteady, NotSteadyBefore)
	case anyFail == (s.Verdict == Steady):
		return fmt.Errorf("steady_state: the verdict is %s, but its probes say otherwise", s.Verdict)
	}
	return nil
}
