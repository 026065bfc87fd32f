package results

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
)

// Good reports whether a run measured what it was asked: it ran to its end without an error,
// an interruption or an abort. Only good runs make a baseline.
func Good(e *Export) bool {
	return !e.Run.Interrupted && e.Run.Error == "" && e.Run.Aborted == ""
}

// RunStatus says in words how a run ended: "completed", or why it did not.
func RunStatus(e *Export) string {
	if why := notAsPlanned(e); why != "" {
		return why
	}
	return "completed"
}

// notAsPlanned says why a run did not go as planned (interrupted, aborted, an error), or "".
func notAsPlanned(e *Export) string {
	var why []string
	if e.Run.Interrupted {
		why = append(why, "interrupted")
	}
	if e.Run.Aborted != "" {
		why = append(why, "aborted: "+e.Run.Aborted)
	}
	if e.Run.Error != "" {
		why = append(why, "error: "+e.Run.Error)
	}
	return strings.Join(why, "; ")
}

// CurrentRunStatus says in one line why a current run is no release's result: it did not
// complete (an error, an interruption), a threshold aborted it, or it failed its own
// thresholds; "" when it completed and passed them.
func CurrentRunStatus(e *Export) string {
	switch {
	case e.Run.Error != "" || e.Run.Interrupted:
		return "the current run did not complete (" + RunStatus(e) + "): its numbers are not a release's"
	case e.Run.Aborted != "":
		return "the current run was aborted by its own threshold (" + e.Run.Aborted + ")"
	}
	var says []string
	if n := Failed(e.Thresholds); n > 0 {
		var failed []string
		for _, t := range e.Thresholds {
			if !t.Pass {
				failed = append(failed, t.Expr+": "+t.Actual)
			}
		}
		says = append(says, fmt.Sprintf("the current run failed %d of its own %d thresholds (%s)", n, len(e.Thresholds), strings.Join(failed, "; ")))
	}
	if ps := e.FailedProbes(); len(ps) > 0 {
		says = append(says, fmt.Sprintf("the current run was not steady: %s failed (%s)", words.Count(len(ps), "steady-state probe"), strings.Join(ps, "; ")))
	}
	return strings.Join(says, "; and ")
}

// Completed reports whether the current run measured to its end (no error, no interruption).
func Completed(e *Export) bool { return e.Run.Error == "" && !e.Run.Interrupted }

// FormatLabels writes a run's labels as key=value, sorted by key, space-separated.
func FormatLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, " ")
}
