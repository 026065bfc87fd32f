package results

import (
	"encoding/csv"
	"fmt"
	"github.com/mcpchaos/mcpchaos/gate"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/outfile"
)

// The companions of the JSON export: a CSV summary for spreadsheets, one .hgrm file per
// histogram for HdrHistogram's plotter, and JUnit XML for CI systems. Each is derived from an
// Export alone, so a merged export gets them too.

// Formats lists the companion formats, in the order they are written.
var Formats = []string{"csv", "hgrm", "junit"}

// WriteCSV writes one row per group (and overall) and metric:
//
//	group,policy,metric,value,unit,withheld
//
// gate.Metric names are those thresholds use; durations are in microseconds (unit "us"). A
// statistic of an empty histogram has an empty value. A figure the run withheld (Run.Withheld)
// has an empty value and says why in the last column: a spreadsheet must not sum a number
// the server did not produce.
func WriteCSV(w io.Writer, e *Export) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"group", "policy", "metric", "value", "unit", "withheld"}); err != nil {
		return err
	}
	ms := gate.Metrics()
	for _, g := range e.AllGroups() {
		for _, m := range ms {
			value, why := "", e.WithheldWhy(g.Name, m.Name)
			if v, ok := Value(m, g); ok && why == "" {
				value = csvNumber(m.Unit(), v)
			}
			if err := cw.Write([]string{g.Name, g.Policy, m.Name, value, string(m.Unit()), why}); err != nil {
				return err
			}
		}
		if err := writeCausesCSV(cw, g); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeCausesCSV adds a group's error causes (causes.go) as rows of their own.
func writeCausesCSV(cw *csv.Writer, g *Group) error {
	c := g.Causes
	if c == nil {
		return nil
	}
	for _, r := range []struct {
		name string
		v    int64
	}{{"own_errors", c.OwnErrors}, {"own_errors_while_starved", c.OwnWhileStarved}, {"own_errors_limits", c.OwnLimits},
		{"server_errors", c.ServerErrors}, {"calls_late", c.CallsLate}, {"skipped_while_starved", c.SkippedWhileStarved}} {
		if err := cw.Write([]string{g.Name, g.Policy, "causes." + r.name, strconv.FormatInt(r.v, 10), "count", ""}); err != nil {
			return err
		}
	}
	return nil
}

func csvNumber(u gate.Unit, v float64) string {
	if u == gate.UnitRatio {
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// AllGroups is the groups followed by overall.
func (e *Export) AllGroups() []*Group {
	gs := make([]*Group, 0, len(e.Groups)+1)
	for i := range e.Groups {
		gs = append(gs, &e.Groups[i])
	}
	return append(gs, &e.Overall)
}

// WriteHGRM writes a histogram in HdrHistogram's percentile-distribution layout (what
// PercentilesPrint prints and the HdrHistogram plotter reads), values in milliseconds.
func WriteHGRM(w io.Writer, h Histogram) error {
	hh, err := h.Decoded()
	if err != nil {
		return err
	}
	_, err = hh.PercentilesPrint(w, 5, 1000) // µs → ms
	return err
}

// HGRMFiles names the .hgrm file of every histogram of every group (and overall), relative to
// a directory: "<group>.<histogram>.hgrm".
func HGRMFiles(e *Export) map[string]Histogram {
	files := map[string]Histogram{}
	for _, g := range e.AllGroups() {
		for _, h := range metrics.Hists() {
			files[g.Name+"."+h.String()+".hgrm"] = g.Histograms[h.String()]
		}
	}
	return files
}

// WriteJUnit writes the thresholds as JUnit test cases, one per threshold, plus one case
// "run completed as planned" that fails when the run was interrupted, aborted or hit an error,
// so that CI sees a cut-short run even where every threshold held.
func WriteJUnit(w io.Writer, e *Export) error {
	class := "mcpchaos." + e.Run.Workload
	s := JUnitSuite{
		Name:      "mcpchaos thresholds: " + e.Run.Workload,
		Time:      strconv.FormatFloat(e.Run.End.Sub(e.Run.Start).Seconds(), 'f', 3, 64),
		Timestamp: e.Run.Start.UTC().Format(time.RFC3339),
		Properties: []JUnitProperty{
			{"workload", e.Run.Workload},
			{"workload_hash", e.Run.WorkloadHash},
			{"tool_version", e.Run.ToolVersion},
			{"target", e.Run.Target},
		},
	}
	if e.Run.ID != "" {
		s.Properties = append(s.Properties, JUnitProperty{"run_id", e.Run.ID})
	}
	for _, k := range slices.Sorted(maps.Keys(e.Run.Labels)) { // run --label key=value, as label.key
		s.Properties = append(s.Properties, JUnitProperty{"label." + k, e.Run.Labels[k]})
	}
	if e.Generator != nil && e.Generator.Starved {
		s.Properties = append(s.Properties, JUnitProperty{"generator_starved", e.Generator.Why()})
	}
	if c := e.Overall.Causes; c != nil && c.OwnErrors+c.CallsLate+c.SkippedWhileStarved > 0 { // causes.go
		s.Properties = append(s.Properties, JUnitProperty{"tool_own_errors", fmt.Sprint(c.OwnErrors)},
			JUnitProperty{"calls_not_made_on_time", fmt.Sprint(c.CallsLate + c.SkippedWhileStarved)})
	}
	if why := e.OwnErrorsWhy(); why != "" {
		s.Properties = append(s.Properties, JUnitProperty{"incomplete", why})
	}
	if e.Run.Shard != nil {
		s.Properties = append(s.Properties, JUnitProperty{"shard", e.Run.Shard.String()})
	}
	if n := len(e.Run.MergedShards); n > 0 {
		s.Properties = append(s.Properties, JUnitProperty{"merged_shards", strconv.Itoa(n)})
	}
	for _, r := range e.Thresholds {
		c := JUnitCase{Name: r.Expr, Classname: class, Time: "0", SystemOut: "actual: " + r.Actual}
		if !r.Pass {
			msg := fmt.Sprintf("%s failed: actual %s", r.Expr, r.Actual)
			if r.Reason != "" {
				msg += " (" + r.Reason + ")"
			}
			if r.AbortedRun {
				msg += "; it aborted the run"
			}
			c.Failure = &JUnitFailure{Message: msg, Type: "threshold", Text: msg}
		}
		s.Cases = append(s.Cases, c)
	}
	s.Cases = append(s.Cases, steadyCases(e, class)...) // steady_junit.go
	run := JUnitCase{Name: "run completed as planned", Classname: class, Time: s.Time}
	if why := notAsPlanned(e); why != "" { // status.go
		msg := "the run did not complete as planned: " + why
		run.Failure = &JUnitFailure{Message: msg, Type: "run", Text: msg}
	}
	s.Cases = append(s.Cases, run)
	return WriteJUnitSuite(w, "mcpchaos", s)
}

// CompanionPaths are where the companions of the JSON export at jsonPath go: beside it, named
// after it (run.json → run.csv, run.junit.xml, run.hgrm/).
func CompanionPaths(jsonPath string) (csvPath, junitPath, hgrmDir string) {
	base := strings.TrimSuffix(jsonPath, filepath.Ext(jsonPath))
	return base + ".csv", base + ".junit.xml", base + ".hgrm"
}

// WriteCompanions writes the companion formats named in formats (a subset of Formats) beside
// the JSON export at jsonPath, each as outfile writes (the .hgrm directory replaced whole), and
// returns the paths written. CompanionSet checks them all before a run.
func WriteCompanions(jsonPath string, e *Export, formats []string) ([]string, error) {
	csvPath, junitPath, hgrmDir := CompanionPaths(jsonPath)
	var written []string
	for _, f := range formats {
		switch f {
		case "csv":
			if err := WriteFileWith(csvPath, func(w io.Writer) error { return WriteCSV(w, e) }); err != nil {
				return written, fmt.Errorf("writing %s: %w", csvPath, err)
			}
			written = append(written, csvPath)
		case "junit":
			if err := WriteFileWith(junitPath, func(w io.Writer) error { return WriteJUnit(w, e) }); err != nil {
				return written, fmt.Errorf("writing %s: %w", junitPath, err)
			}
			written = append(written, junitPath)
		case "hgrm":
			// The directory is replaced whole, so no .hgrm of an earlier run stays beside these.
			err := outfile.ReplaceDir(hgrmDir, ".hgrm", func(tmp string) error {
				for name, h := range HGRMFiles(e) {
					p := filepath.Join(tmp, name)
					if err := WriteFileWith(p, func(w io.Writer) error { return WriteHGRM(w, h) }); err != nil {
						return fmt.Errorf("writing %s: %w", filepath.Join(hgrmDir, name), err)
					}
				}
				return nil
			})
			if err != nil {
				return written, err
			}
			written = append(written, hgrmDir+string(filepath.Separator))
		default:
			return written, fmt.Errorf("unknown export format %q; use %s", f, strings.Join(Formats, ", "))
		}
	}
	return written, nil
}

// CompanionSet is the export at jsonPath with the companions of formats, for checking before
// any work (outfile.Set.Check) and for marking the set while it is written; the companions of
// the formats not asked for are stale, removed once the set is written, so no companion
// describes another run.
func CompanionSet(jsonPath string, formats []string) outfile.Set {
	csvPath, junitPath, hgrmDir := CompanionPaths(jsonPath)
	s := outfile.Set{Export: jsonPath, DirExt: ".hgrm"}
	asked := map[string]bool{}
	for _, f := range formats {
		asked[f] = true
	}
	for _, c := range []struct {
		format, path string
		dir          bool
	}{{"csv", csvPath, false}, {"junit", junitPath, false}, {"hgrm", hgrmDir, true}} {
		switch {
		case !asked[c.format]:
			s.Stale = append(s.Stale, c.path)
		case c.dir:
			s.Dirs = append(s.Dirs, c.path)
		default:
			s.Files = append(s.Files, c.path)
		}
	}
	return s
}
