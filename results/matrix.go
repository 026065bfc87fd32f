package results

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// MatrixRow is one client library's outcome under a run's fault: the row of the client ×
// server matrix (mcpchaos matrix) for the group that ran it.
type MatrixRow struct {
	Group   string
	Library string // name@version, and the protocol it negotiated
	// Reinitialized counts the new sessions the application got after the first (its
	// library's signal, or its ending the session, let it connect anew); Deaths the session
	// deaths its clients ran into.
	Reinitialized, Deaths int64
	Misattributed         int64
	Hung                  int64
	HungSeconds           int64
	Replayed              int64 // dead sessions' stored answers delivered as calls' results
	Background            int64 // requests sent on the library's own to dead sessions
	BackgroundPerSecond   float64
	ListenersDead         int64
	Misclassified         int64
	Substituted           int64
	// Classes are the error classes the application saw, by name: how many of each a run saw
	// can be the library's own draw (the Go SDK's reconnect jitter decides whether its GET or
	// the next call meets a death first); the counts are in the export.
	Classes string
}

// LibraryMatrix is the matrix of the export's groups that ran a client library, in the
// export's group order.
func LibraryMatrix(e *Export) []MatrixRow {
	secs := e.Run.End.Sub(e.Run.Start).Seconds()
	var rows []MatrixRow
	for _, g := range e.Groups {
		lib, ok := e.Run.Libraries[g.Name]
		if !ok {
			continue
		}
		c := g.Counters
		r := MatrixRow{Group: g.Name, Library: lib.Name + "@" + lib.Version,
			Reinitialized: max(0, c["sessions_started"]-int64(g.Clients)), Deaths: c["sessions_dead"],
			Misattributed: c["misattributed_errors"], Hung: c["calls_hung"], HungSeconds: c["hung_seconds"],
			Replayed: c["replayed_errors_delivered"], Background: c["dead_session_background_requests"],
			ListenersDead: c["listeners_silently_dead"], Misclassified: c["errors_misclassified"],
			Substituted: c["silent_substitutions"], Classes: classNames(lib.ErrorClasses)}
		if lib.NegotiatedProtocol != "" {
			r.Library += " (" + lib.NegotiatedProtocol + ")"
		}
		if secs > 0 {
			r.BackgroundPerSecond = float64(r.Background) / secs
		}
		rows = append(rows, r)
	}
	return rows
}

// classNames lists error classes by name.
func classNames(m map[string]int64) string {
	keys := slices.Sorted(maps.Keys(m))
	if len(keys) == 0 {
		return "-"
	}
	return strings.Join(keys, ", ")
}

// WriteMatrix prints the export's library matrix: one row per library group, one column per
// outcome. Markdown puts it in a table a README can hold.
func WriteMatrix(w io.Writer, e *Export, markdown bool) error {
	rows := LibraryMatrix(e)
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no group of this run ran a client library (policy gosdk, mcpgo, ts-sdk or ts-client)")
		return err
	}
	head := []string{"group", "library", "deaths met", "re-initialized", "misattributed", "hung (s)", "replayed answer delivered",
		"background requests to dead sessions", "listener silently dead", "death misclassified", "silent substitutions", "errors the application saw"}
	yesNo := func(n int64) string {
		if n == 0 {
			return "no"
		}
		return fmt.Sprintf("yes (%d)", n)
	}
	var lines [][]string
	for _, r := range rows {
		hung := "no"
		if r.Hung > 0 {
			// The calls and the wait a call: the run's sum of seconds moves with how late a
			// loaded machine hands back a timeout, the wait of one call hardly.
			hung = fmt.Sprintf("yes (%d, %.0f s each)", r.Hung, float64(r.HungSeconds)/float64(r.Hung))
		}
		// How many requests a library sends to a dead session on its own depends on its
		// backoff's jitter and on when the application lets go: the count and the rate are
		// the summary's and the export's; the matrix says whether it does.
		bg := "no"
		if r.Background > 0 {
			bg = "yes"
		}
		lines = append(lines, []string{r.Group, r.Library, fmt.Sprint(r.Deaths), yesNo(r.Reinitialized), yesNo(r.Misattributed), hung,
			yesNo(r.Replayed), bg, yesNo(r.ListenersDead), yesNo(r.Misclassified), yesNo(r.Substituted), r.Classes})
	}
	if markdown {
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, l := range lines {
			if _, err := fmt.Fprintf(w, "| %s |\n", strings.Join(l, " | ")); err != nil {
				return err
			}
		}
		return nil
	}
	// On a terminal the outcomes are rows and the libraries columns, as in the run's summary;
	// the libraries' module paths are shortened to fit.
	for _, l := range lines {
		l[1] = strings.TrimPrefix(strings.TrimPrefix(l[1], "github.com/"), "@")
		l[1] = strings.Replace(l[1], " (", " ", 1)
		l[1] = strings.TrimSuffix(l[1], ")")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, h := range head {
		cells := []string{h}
		for _, l := range lines {
			cells = append(cells, l[i])
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
