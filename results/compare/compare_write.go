package compare

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/results"
)

// judged reports whether a row was judged (whatever the outcome), not only reported.
func (r Row) judged() bool { return r.Verdict != VerdictInfo }

// shown is the rows a report lists: every row with all, else the judged rows that moved or
// lack data; unjudged counts the rows left out that moved (reported only).
func (c *Comparison) shown(all bool) (rows []Row, unjudged int) {
	if all {
		return c.Rows, 0
	}
	for _, r := range c.Rows {
		switch {
		case !r.judged():
			unjudged++
		case r.Verdict != VerdictSame || r.Note != "":
			rows = append(rows, r)
		}
	}
	return rows, unjudged
}

// Verdict is the comparison's outcome in one line, led by its verdict word (Outcome).
func (c *Comparison) Verdict() string {
	judged := 0
	for _, r := range c.Rows {
		if r.judged() {
			judged++
		}
	}
	switch c.Outcome {
	case OutcomeCouldNotRun:
		return "verdict: COULD NOT RUN: the current run did not complete, so nothing was judged"
	case OutcomeRegressed:
		if c.Regressions == 0 {
			return "verdict: REGRESSED (the current run failed its own gate)"
		}
		return "verdict: REGRESSED (" + words.Count(c.Regressions, "regression") + ")"
	case OutcomeInconclusive:
		return fmt.Sprintf("verdict: INCONCLUSIVE: no regression among %d judged numbers, but %d timing row%s could not be judged: the runner was starved",
			judged-c.Inconclusive, c.Inconclusive, words.S(c.Inconclusive))
	}
	if c.Inconclusive > 0 {
		return fmt.Sprintf("verdict: OK: no regression in %d judged numbers, the server's latency judged by its floor on the kernel's clock; %d timing row%s held back: the runner was starved, and a starved runner moves them",
			judged-c.Inconclusive, c.Inconclusive, words.S(c.Inconclusive))
	}
	return fmt.Sprintf("verdict: OK: no regression in %d judged numbers", judged)
}

// Headline is the verdict for a title (a pull-request comment's, the report's banner): the
// verdict word capitalised, and what it rests on.
func (c *Comparison) Headline() string {
	switch c.Outcome {
	case OutcomeCouldNotRun:
		return "Could not run"
	case OutcomeRegressed:
		if c.Regressions == 0 {
			return "Regressed (the current run failed its own gate)"
		}
		return "Regressed (" + words.Count(c.Regressions, "regression") + ")"
	case OutcomeInconclusive:
		return "Inconclusive (the runner was starved)"
	}
	if c.Inconclusive > 0 {
		return "OK (no regression; timing rows held back: the runner was starved)"
	}
	return "OK (no regression)"
}

func (r Row) cells() (base, cur, change, verdict string) {
	val := func(v *float64) string {
		if v == nil {
			return "-"
		}
		if r.Unit == "pass" {
			return map[bool]string{true: "pass", false: "FAIL"}[*v == 1]
		}
		return gate.FormatValue(r.Unit, *v)
	}
	base, cur = val(r.Base), val(r.Current)
	if r.BaseMin != nil && r.BaseMax != nil && *r.BaseMin != *r.BaseMax {
		base += " (" + val(r.BaseMin) + ".." + val(r.BaseMax) + ")"
	}
	if r.Change != nil && *r.Change != 0 && r.Unit != "pass" {
		sign := "+"
		if *r.Change < 0 {
			sign = "-"
		}
		abs := *r.Change
		if abs < 0 {
			abs = -abs
		}
		change = sign + gate.FormatValue(r.Unit, abs)
		if r.ChangePct != nil {
			change += fmt.Sprintf(" (%+.1f%%)", *r.ChangePct)
		}
	}
	verdict = r.Verdict
	switch r.Verdict {
	case VerdictRegressed:
		verdict = "REGRESSED (" + r.Tolerance + ")"
	case VerdictOK, VerdictImproved, VerdictNoise:
		verdict += " (" + r.Tolerance + ")"
	case VerdictInconclusive:
		verdict = "inconclusive"
	}
	if r.Note != "" {
		verdict += ": " + r.Note
	}
	return
}

func (c *Comparison) summaryLine() string {
	changed := 0
	for _, r := range c.Rows {
		if r.Verdict != VerdictSame {
			changed++
		}
	}
	if changed == 0 {
		return fmt.Sprintf("no change in any of %d compared numbers", len(c.Rows))
	}
	inc := ""
	if c.Inconclusive > 0 {
		inc = fmt.Sprintf(", %d inconclusive", c.Inconclusive)
	}
	return fmt.Sprintf("%d regression%s, %d improvement%s%s; %d of %d compared numbers changed",
		c.Regressions, words.S(c.Regressions), c.Improvements, words.S(c.Improvements), inc, changed, len(c.Rows))
}

func (r RunRef) describe() string {
	s := fmt.Sprintf("%s (%s, %s, mcpchaos %s", r.File, r.Workload, r.Start.UTC().Format(time.RFC3339), r.ToolVersion)
	if r.Shard != "" {
		s += ", shard " + r.Shard
	}
	if l := results.FormatLabels(r.Labels); l != "" {
		s += ", " + l
	}
	return s + ")"
}

// writeHeader names the baselines and the current run.
func writeHeader(w io.Writer, c *Comparison) {
	if len(c.Baselines) <= 1 {
		fmt.Fprintf(w, "base     %s\n", c.Base.describe())
	} else {
		fmt.Fprintf(w, "baseline %d runs; the base column is their median (min..max):\n", len(c.Baselines))
		for _, b := range c.Baselines {
			fmt.Fprintf(w, "         %s\n", b.describe())
		}
	}
	for _, s := range c.Skipped {
		fmt.Fprintf(w, "skipped  %s\n", s)
	}
	fmt.Fprintf(w, "current  %s\n", c.Current.describe())
}

// Write prints the comparison: the current run's status when it is not a good
// one, the verdict, what changed in words, then the judged rows that moved as a table (every
// row with all), one line counting the rows only reported, and the runs compared.
func Write(w io.Writer, c *Comparison, all bool) error {
	if c.CurrentRun != "" {
		fmt.Fprintln(w, c.CurrentRun)
	}
	fmt.Fprintln(w, c.Verdict())
	for _, f := range c.Findings {
		fmt.Fprintf(w, "  what changed: %s\n", f)
	}
	if len(c.Starved) > 0 {
		fmt.Fprintf(w, "  starved: %s\n", strings.Join(c.Starved, "; "))
	}
	rows, unjudged := c.shown(all)
	rows, held := c.heldBack(rows)
	if len(held) > 0 {
		fmt.Fprintf(w, "  held back (inconclusive: a starved runner moves them): %s\n", strings.Join(held, "; "))
	}
	fmt.Fprintln(w)
	if len(rows) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "group\tmetric\tbase\tcurrent\tchange\tverdict")
		for _, r := range rows {
			b, cur, ch, v := r.cells()
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Group, r.Metric, b, cur, ch, v)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if unjudged > 0 {
		fmt.Fprintf(w, "%d more row%s moved and %s reported only, not judged (load figures, a control group's amounts, overall sums, reported-only metrics): --all lists them\n",
			unjudged, words.S(unjudged), map[bool]string{true: "is", false: "are"}[unjudged == 1])
	}
	fmt.Fprintln(w)
	writeHeader(w, c)
	if c.Forced != "" {
		fmt.Fprintf(w, "compared with --force although %s\n", c.Forced)
	}
	_, err := fmt.Fprintln(w, c.summaryLine())
	return err
}

// heldBack takes out of rows those held back because a run was starved, which all share one
// note (the starved runs, said once above the table), and lists them per group:
// "probe tool_call_latency.p50, tool_call_latency.p90".
func (c *Comparison) heldBack(rows []Row) (kept []Row, held []string) {
	note := starvedNote(c.Starved)
	var order []string
	byGroup := map[string][]string{}
	for _, r := range rows {
		if r.Verdict != VerdictInconclusive || r.Note != note {
			kept = append(kept, r)
			continue
		}
		if byGroup[r.Group] == nil {
			order = append(order, r.Group)
		}
		byGroup[r.Group] = append(byGroup[r.Group], r.Metric)
	}
	for _, g := range order {
		held = append(held, g+" "+strings.Join(byGroup[g], ", "))
	}
	return kept, held
}

// WriteMarkdown prints the comparison for a pull-request comment, short: the
// verdict as a headline, the current run's status, what changed in words, the regressions
// (and with all, every row), and one line of counts.
func WriteMarkdown(w io.Writer, c *Comparison, all bool) error {
	head := c.Headline()
	fmt.Fprintf(w, "### mcpchaos compare: %s\n\n", head)
	if c.CurrentRun != "" {
		fmt.Fprintf(w, "> **%s**\n\n", mdEscape(c.CurrentRun))
	}
	for _, f := range c.Findings {
		fmt.Fprintf(w, "- %s\n", mdEscape(f))
	}
	if len(c.Findings) > 0 {
		fmt.Fprintln(w)
	}
	base := fmt.Sprintf("Base `%s` (%s)", c.Base.File, c.Base.Start.UTC().Format(time.RFC3339))
	if len(c.Baselines) > 1 {
		base = fmt.Sprintf("Baseline: %d runs (newest `%s`, %s)", len(c.Baselines), c.Base.File, c.Base.Start.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "Workload `%s`. %s, current `%s` (%s).\n\n", c.Current.Workload, base, c.Current.File, c.Current.Start.UTC().Format(time.RFC3339))
	if l := results.FormatLabels(c.Current.Labels); l != "" {
		fmt.Fprintf(w, "Current run: `%s`.\n\n", mdEscape(l))
	}
	if c.Forced != "" {
		fmt.Fprintf(w, "> Compared with `--force` although %s.\n\n", mdEscape(c.Forced))
	}
	if len(c.Starved) > 0 {
		fmt.Fprintf(w, "> Starved: %s.\n\n", mdEscape(strings.Join(c.Starved, "; ")))
	}
	var rows []Row
	for _, r := range c.Rows {
		if all || r.Verdict == VerdictRegressed {
			rows = append(rows, r)
		}
	}
	if len(rows) > 0 {
		fmt.Fprintln(w, "| group | metric | base | current | change | verdict |")
		fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | --- |")
		for _, r := range rows {
			b, cur, ch, v := r.cells()
			if r.Verdict == VerdictInconclusive && r.Note == starvedNote(c.Starved) {
				v = "inconclusive (starved: see above)" // the note once, not per row
			}
			if r.Verdict == VerdictRegressed {
				v = "**" + mdEscape(v) + "**"
			} else {
				v = mdEscape(v)
			}
			fmt.Fprintf(w, "| %s | `%s` | %s | %s | %s | %s |\n", mdEscape(r.Group), r.Metric, mdEscape(b), mdEscape(cur), mdEscape(ch), v)
		}
		fmt.Fprintln(w)
	}
	_, err := fmt.Fprintln(w, strings.ToUpper(c.summaryLine()[:1])+c.summaryLine()[1:]+".")
	return err
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

// WriteJUnit writes the comparison as JUnit: a test case "compare verdict" that
// fails when the verdict is regressed or could not run and is skipped when it is inconclusive
// (its message says the verdict word and why), and a failing case per regressed row, so that
// a CI's test report shows what the job's status shows.
func WriteJUnit(w io.Writer, c *Comparison) error {
	class := "mcpchaos.compare." + c.Current.Workload
	s := results.JUnitSuite{Name: "mcpchaos compare: " + c.Current.Workload, Time: "0",
		Timestamp:  c.Current.Start.UTC().Format(time.RFC3339),
		Properties: []results.JUnitProperty{{Name: "verdict", Value: c.Outcome}, {Name: "baselines", Value: fmt.Sprint(len(c.Baselines))}}}
	msg := c.Verdict()
	if c.CurrentRun != "" {
		msg += "; " + c.CurrentRun
	}
	verdict := results.JUnitCase{Name: "compare verdict", Classname: class, Time: "0", SystemOut: msg}
	switch c.Outcome {
	case OutcomeRegressed, OutcomeCouldNotRun:
		verdict.Failure = &results.JUnitFailure{Message: msg, Type: c.Outcome, Text: strings.Join(append([]string{msg}, c.Findings...), "\n")}
	case OutcomeInconclusive:
		verdict.Skipped = &results.JUnitSkipped{Message: msg + ": " + strings.Join(c.Starved, "; ")}
	}
	s.Cases = append(s.Cases, verdict)
	for _, r := range c.Rows {
		if r.Verdict != VerdictRegressed {
			continue
		}
		b, cur, ch, v := r.cells()
		text := fmt.Sprintf("%s %s: base %s, current %s, change %s: %s", r.Group, r.Metric, b, cur, ch, v)
		s.Cases = append(s.Cases, results.JUnitCase{Name: r.Group + " " + r.Metric, Classname: class, Time: "0",
			Failure: &results.JUnitFailure{Message: text, Type: "regression", Text: text}})
	}
	return results.WriteJUnitSuite(w, "mcpchaos compare", s)
}
