package results

import (
	"fmt"
	"io"
	"strings"
)

// WriteGeneratorWarning says when the load generator was starved past its bound: a warning,
// not a problem, because the run's counts of hazards still hold; its timing figures from the
// starved windows are the runner's as much as the server's, and compare calls them
// inconclusive (docs/gate.md).
func WriteGeneratorWarning(w io.Writer, exp *Export) {
	g := exp.Generator
	if g == nil || !g.Starved {
		return
	}
	fmt.Fprintf(w, "warning: the load generator was %s; its latencies and amounts of work from then are the runner's as much as the server's (bound: %s)\n", g.Why(), g.Bound)
}

// WriteIncomplete heads the summary of a run that did not measure the server, with why: its
// load generator starved for most of its time, or most of its transport errors its own
// (docs/metrics.md, "Whose errors"). These are the summary's first lines, not a footnote.
func WriteIncomplete(w io.Writer, exp *Export) {
	if g := exp.Generator; g.MostlyStarved() {
		shards := ""
		if g.Shards > 0 {
			shards = fmt.Sprintf(" (%d of %d shards starved)", g.StarvedShards, g.Shards)
		}
		late := ""
		if c := exp.Overall.Causes; c != nil {
			late = fmt.Sprintf("; %d calls began over 1s late, %d turns were skipped and %d timeouts came while it was starved", c.CallsLate, c.SkippedWhileStarved, c.OwnWhileStarved)
		}
		fmt.Fprintf(w, "STARVED: the load generator was %s%s%s: its timing figures are the machine's running it as much as the server's\n", g.Why(), shards, late)
		if why := exp.LateWhy(); why != "" {
			fmt.Fprintf(w, "LATE: %s\n", why)
		}
	}
	if why := exp.OwnErrorsWhy(); why != "" {
		fmt.Fprintf(w, "INCOMPLETE: %s\n", why)
	}
}

// IncompleteErr is the error of a run that did not measure the server (exit 1): most of its
// transport errors its own or, for a --procs run (procs: true), its shards starved for most of
// the run by the plan it ran on this machine so that its calls could not keep their schedule.
// A starved run whose calls kept it stays complete: its headline says STARVED and compare
// calls its timing inconclusive.
func IncompleteErr(exp *Export, procs bool) error {
	var why []string
	if g := exp.Generator; procs && g.MostlyStarved() {
		if late := exp.LateWhy(); late != "" {
			why = append(why, "the load generator was "+g.Why()+" and "+late+"; run fewer --procs or fewer clients on this machine, or shard across machines")
		}
	}
	if w := exp.OwnErrorsWhy(); w != "" {
		why = append(why, w)
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("incomplete: %s", strings.Join(why, "; "))
}
