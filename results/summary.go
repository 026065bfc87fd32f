package results

import (
	"fmt"
	"github.com/mcpchaos/mcpchaos/gate"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// summaryRows are the lines of the human summary: the numbers that tell whether the replay
// lied and what it cost, in the order a reader asks about them.
var summaryRows = []struct {
	label string
	value func(g *Group) string
}{
	{"clients", func(g *Group) string { return fmt.Sprint(g.Clients) }},
	{"sessions started", counter("sessions_started")},
	{"drops", counter("drops")},
	{"replays 200 / dead / refused", func(g *Group) string {
		return fmt.Sprintf("%d / %d / %d", g.Counters["replays_ok"], g.Counters["replays_dead"], g.Counters["replays_unknown_cursor"])
	}},
	{"probes sent", counter("probes_sent")},
	{"sessions dead (ran into)", counter("sessions_dead")},
	{"deaths detected as such", counter("sessions_dead_detected")},
	{"misattributed errors", counter("misattributed_errors")},
	{"dead-session requests", counter("dead_session_requests")},
	{"  of them retries", counter("retries_against_dead")},
	{"retry amplification", func(g *Group) string { return fmt.Sprintf("%.2f", g.RetryAmplification) }},
	{"stale events applied", counter("stale_events_applied")},
	{"events quarantined", counter("events_quarantined")},
	{"re-init collisions", counter("reinit_collisions")},
	{"false-healthy seconds", func(g *Group) string { return fmt.Sprintf("%.1f", g.FalseHealthySeconds) }},
	{"tool calls ok / failed", func(g *Group) string {
		return fmt.Sprintf("%d / %d", g.Counters["tool_calls_ok"], g.Counters["tool_calls_failed"])
	}},
	{"calls not made", counter("calls_not_made")},
	{"tool errors", counter("tool_errors")},
	{"server requests answered", counter("server_requests_answered")},
	{"probe latency p50 / p99", latency("probe_latency")},
	{"reconnect latency p50 / p99", latency("reconnect_latency")},
	{"detection delay p50 / p99", latency("detection_delay")},
	{"tool call latency p50 / p99", latency("tool_call_latency")},
	{"transport errors", func(g *Group) string {
		var parts []string
		for _, k := range gate.ErrorKinds() {
			if n := g.Errors[k]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", k, n))
			}
		}
		if len(parts) == 0 {
			return "none"
		}
		return strings.Join(parts, ", ")
	}},
	{"  of them the tool's own", func(g *Group) string { // causes.go; docs/metrics.md, "Whose errors"
		c := g.Causes
		switch {
		case c == nil:
			return "-"
		case c.OwnErrors == 0:
			return "0"
		}
		return fmt.Sprintf("%d (starved %d, own limits %d)", c.OwnErrors, c.OwnWhileStarved, c.OwnLimits)
	}},
	{"calls late (over 1s) / skipped starved", func(g *Group) string {
		if g.Causes == nil {
			return "-"
		}
		return fmt.Sprintf("%d / %d", g.Causes.CallsLate, g.Causes.SkippedWhileStarved)
	}},
}

// libraryRows are added when a group ran a client library (docs/libraries.md): the library
// failures, which mcpchaos's own clients never have.
var libraryRows = []struct {
	label string
	value func(g *Group) string
}{
	{"calls hung / seconds", func(g *Group) string {
		return fmt.Sprintf("%d / %d", g.Counters["calls_hung"], g.Counters["hung_seconds"])
	}},
	{"replayed answers delivered", counter("replayed_errors_delivered")},
	{"background requests to dead / s", nil}, // per second: the run's (libraryValue)
	{"listeners silently dead", counter("listeners_silently_dead")},
	{"deaths misclassified", counter("errors_misclassified")},
	{"silent substitutions", counter("silent_substitutions")},
	{"failed call latency p50 / p99", latency("call_failure_latency")},
}

// churnRow is added when clients churned: how their sessions ended.
var churnRow = struct {
	label string
	value func(g *Group) string
}{"sessions closed / abandoned", func(g *Group) string {
	return fmt.Sprintf("%d / %d", g.Counters["sessions_closed"], g.Counters["sessions_abandoned"])
}}

// eraRow is added when the server answered requests as of a protocol era it does not speak (a
// rolling upgrade across eras behind one origin): those were not session deaths.
var eraRow = struct {
	label string
	value func(g *Group) string
}{"wrong-era requests", counter("wrong_era_requests")}

// listenRows are added when the run spoke the stateless revision: its listen streams.
var listenRows = []struct {
	label string
	value func(g *Group) string
}{
	{"listens / drops", func(g *Group) string {
		return fmt.Sprintf("%d / %d", g.Counters["listens"], g.Counters["listen_drops"])
	}},
	{"notifications read", counter("notifications_received")},
	{"notifications lost", counter("notifications_lost")},
}

// listenRow says whether a row is one of listenRows, whose figures a server may not let the
// clients observe (run.not_observable): those show so, not a 0.
func listenRow(label string) bool {
	for _, r := range listenRows {
		if r.label == label {
			return true
		}
	}
	return false
}

// rowMetrics are the metrics a summary row shows, where a run may withhold them: a row any of
// them is withheld for a group shows the mark in that group's column (Run.Withheld).
var rowMetrics = map[string][]string{
	"sessions started": {"sessions_started"}, "drops": {"drops"},
	"replays 200 / dead / refused": {"replays_ok"}, "probes sent": {"probes_sent"},
	"sessions dead (ran into)": {"sessions_dead"}, "deaths detected as such": {"sessions_dead_detected"},
	"misattributed errors": {"misattributed_errors"}, "dead-session requests": {"dead_session_requests"},
	"  of them retries": {"retries_against_dead"}, "retry amplification": {"retry_amplification"},
	"stale events applied": {"stale_events_applied"}, "events quarantined": {"events_quarantined"},
	"re-init collisions": {"reinit_collisions"}, "false-healthy seconds": {"false_healthy_seconds"},
	"probe latency p50 / p99": {"probe_latency"}, "reconnect latency p50 / p99": {"reconnect_latency"},
	"detection delay p50 / p99": {"detection_delay"},
	"listens / drops":           {"listens"}, "notifications read": {"notifications_received"},
	"notifications lost": {"notifications_lost"},
}

// withheldMark is what the summary prints in place of a withheld figure.
func withheldMark(why string) string {
	if why == NotApplicable {
		return "n/a"
	}
	return "withheld (" + why + ")"
}

func counter(name string) func(g *Group) string {
	return func(g *Group) string { return fmt.Sprint(g.Counters[name]) }
}

func latency(name string) func(g *Group) string {
	return func(g *Group) string {
		h := g.Histograms[name]
		if h.Count == 0 {
			return "-"
		}
		return fmtUS(h.P50US) + " / " + fmtUS(h.P99US)
	}
}

func fmtUS(us int64) string {
	d := time.Duration(us) * time.Microsecond
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", us)
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(us)/1000)
	default:
		return d.Round(10 * time.Millisecond).String()
	}
}

// WriteSummary prints the human summary: one column per group.
func WriteSummary(w io.Writer, e *Export) error {
	if o := e.Run.OtherGeneration; o != "" && (e.Run.Target != "builtin" || e.Run.Generation != "session") {
		// A server that speaks both generations: say which one these figures are of. Not for
		// the built-in target measured as it is by default (the demo): the reference server
		// speaks both by design, which the export's other_generation still records.
		how := "leave protocol out, or name a 2025 revision, to measure it"
		if o == "stateless" {
			how = "protocol: 2026-07-28 in the groups measures it"
		}
		fmt.Fprintf(w, "generation: %s (the target also speaks the %s generation: %s)\n\n", e.Run.Generation, o, how)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "\t")
	for _, g := range e.Groups {
		fmt.Fprintf(tw, "%s (%s)\t", g.Name, g.Policy)
	}
	fmt.Fprintln(tw)
	rows := summaryRows
	if len(e.Run.Libraries) > 0 {
		rows = append(rows[:len(rows):len(rows)], libraryRows...)
	}
	if e.Run.Generation == "stateless" {
		rows = append(rows[:len(rows):len(rows)], listenRows...)
	}
	if e.Overall.Counters["sessions_abandoned"] > 0 { // a churn workload (docs/session-leaks.md)
		rows = append(rows[:len(rows):len(rows)], churnRow)
	}
	if e.Overall.Counters["wrong_era_requests"] > 0 { // docs/metrics.md, "wrong_era_requests"
		rows = append(rows[:len(rows):len(rows)], eraRow)
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t", row.label)
		for i := range e.Groups {
			v := libraryValue(e, &e.Groups[i])
			if row.value != nil {
				v = row.value(&e.Groups[i])
			}
			for _, m := range rowMetrics[row.label] {
				if why := e.Run.WithheldWhy(e.Groups[i].Name, m); why != "" {
					v = withheldMark(why)
				}
				if listenRow(row.label) && slices.Contains(e.Run.NotObservable[e.Groups[i].Name], m) {
					v = "not observable" // no listen stream offered, or no numbers to see a gap in
				}
			}
			fmt.Fprintf(tw, "%s\t", v)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// libraryValue is a library row that needs more than the group: the background requests to
// dead sessions with their rate over the run (run.libraries).
func libraryValue(e *Export, g *Group) string {
	n := g.Counters["dead_session_background_requests"]
	lib, ok := e.Run.Libraries[g.Name]
	if !ok {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d / %.2f", n, lib.BackgroundPerSecond)
}
