package compare

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/results"
)

// Verdicts of a compared metric.
const (
	VerdictSame      = "same"
	VerdictOK        = "ok"        // moved, within the tolerance
	VerdictRegressed = "regressed" // moved the bad way past the tolerance and the baselines' noise
	VerdictImproved  = "improved"  // moved the good way past the tolerance and the noise
	VerdictNoise     = "noise"     // moved past the tolerance, within the noise: the note says which
	VerdictInfo      = "info"      // moved; reported only (the note says why, unless by tolerance)
	VerdictMissing   = "no data"   // a value on one side only
	// VerdictInconclusive: a timing row of runs of which one was generator-starved: the move
	// is the runner's as much as the server's (docs/gate.md).
	VerdictInconclusive = "inconclusive"
)

// Row is one compared metric of one group. With several baselines, Base is their median and
// BaseMin and BaseMax their spread.
type Row struct {
	Group  string    `json:"group"`
	Metric string    `json:"metric"`
	Unit   gate.Unit `json:"unit"`
	// Class is what the metric says about the server (hazard, load, latency, work; gate.Class);
	// empty for threshold rows.
	Class     gate.Class `json:"class,omitempty"`
	Base      *float64   `json:"base"`
	BaseMin   *float64   `json:"base_min,omitempty"`
	BaseMax   *float64   `json:"base_max,omitempty"`
	Current   *float64   `json:"current"`
	Change    *float64   `json:"change,omitempty"`     // current - base
	ChangePct *float64   `json:"change_pct,omitempty"` // relative to base, when base is not 0
	Verdict   string     `json:"verdict"`
	Tolerance string     `json:"tolerance"`
	Note      string     `json:"note,omitempty"`
}

// Comparison is a current run compared with one or more baseline runs.
type Comparison struct {
	// Base is the most recent baseline; Baselines lists every baseline used (v2 of compare's
	// JSON; Base stays for readers of the one-baseline layout).
	Base      RunRef   `json:"base"`
	Baselines []RunRef `json:"baselines"`
	// Skipped lists baselines left out because they were not good runs (failed, interrupted,
	// aborted): a baseline is made of runs that measured what they were asked.
	Skipped      []string `json:"skipped,omitempty"`
	Current      RunRef   `json:"current"`
	Rows         []Row    `json:"rows"`
	Regressions  int      `json:"regressions"`
	Improvements int      `json:"improvements"`
	// Inconclusive counts timing rows that could not be judged because a run was starved;
	// Starved says which runs were, and how (v3 of compare's JSON).
	Inconclusive int      `json:"inconclusive"`
	Starved      []string `json:"starved,omitempty"`
	// CurrentRun is "" when the current run completed and passed its own thresholds, else
	// why not, in one line; it is the first thing compare says (CurrentRunStatus).
	CurrentRun string `json:"current_run,omitempty"`
	// Findings say in words what changed in the server's sessions (findings.go).
	Findings []string `json:"findings,omitempty"`
	Forced   string   `json:"forced,omitempty"` // why the runs were compared although they differ
	// Outcome is the comparison's verdict in the words every output uses alike (the text,
	// --markdown, JUnit, the report's banner, the CI glue's outputs): OutcomeOK,
	// OutcomeRegressed, OutcomeInconclusive or OutcomeCouldNotRun (v4 of compare's JSON).
	Outcome string `json:"verdict"`
}

// The verdicts of a comparison (Comparison.Outcome).
const (
	OutcomeOK           = "ok"            // nothing judged regressed; no row left unjudged by a starved runner
	OutcomeRegressed    = "regressed"     // a row regressed, or the current run failed its own gate (thresholds, steady state)
	OutcomeInconclusive = "inconclusive"  // nothing regressed, but rows a starved runner moves could not be judged
	OutcomeCouldNotRun  = "could not run" // the current run did not complete (an error, an interruption): nothing to judge
)

// outcome is the comparison's verdict (see Outcome), from the current run's status first.
func (c *Comparison) outcome(cur *results.Export) string {
	switch {
	case cur.Run.Error != "" || cur.Run.Interrupted:
		return OutcomeCouldNotRun
	case c.CurrentRun != "" || c.Regressions > 0:
		return OutcomeRegressed
	case c.Inconclusive > 0 && !c.floorJudged():
		return OutcomeInconclusive
	}
	return OutcomeOK
}

// floorJudged reports whether the server's floor (gate.FloorHist's FloorStat, timed by the
// kernel's clock) was judged in some group: then the server's latency was judged on a starved
// runner too, and the timing rows starvation moves are held back, not a reason for an
// inconclusive verdict. Without it (Toxiproxy elsewhere, HTTP/2, another system than Linux)
// a starved run's latency is not judged at all, and the verdict says inconclusive.
func (c *Comparison) floorJudged() bool {
	for _, r := range c.Rows {
		if m, err := gate.ParseMetric(r.Metric); err == nil && m.KernelTimed() && r.Current != nil && r.Base != nil {
			switch r.Verdict {
			case VerdictOK, VerdictSame, VerdictNoise, VerdictRegressed, VerdictImproved:
				return true
			}
		}
	}
	return false
}

// RunRef identifies a compared run.
type RunRef struct {
	File         string            `json:"file"`
	Workload     string            `json:"workload"`
	WorkloadHash string            `json:"workload_hash"`
	ToolVersion  string            `json:"tool_version"`
	Start        time.Time         `json:"start"`
	Shard        string            `json:"shard,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
}

func refOf(file string, e *results.Export) RunRef {
	r := RunRef{File: file, Workload: e.Run.Workload, WorkloadHash: e.Run.WorkloadHash, ToolVersion: e.Run.ToolVersion,
		Start: e.Run.Start, Labels: e.Run.Labels}
	if e.Run.Shard != nil {
		r.Shard = e.Run.Shard.String()
	}
	return r
}

// Comparable says why two runs should not be compared (different workloads, a shard against
// a whole run), or returns nil.
func Comparable(base, cur results.Part) error {
	b, c := base.Export.Run, cur.Export.Run
	switch {
	case b.Workload != c.Workload:
		return results.Mismatchf("%s ran workload %q and %s ran %q: they are different experiments", base.File, b.Workload, cur.File, c.Workload)
	case b.WorkloadHash != c.WorkloadHash:
		return results.Mismatchf("%s and %s both ran workload %q, but from different files (%s, %s): the workload changed between them", base.File, cur.File, b.Workload, results.ShortHash(b.WorkloadHash), results.ShortHash(c.WorkloadHash))
	case !sameShard(b.Shard, c.Shard):
		return results.Mismatchf("%s is %s and %s is %s: compare whole runs (merge shards first) or the same shard of each", base.File, shardName(b.Shard), cur.File, shardName(c.Shard))
	}
	return nil
}

func sameShard(a, b *results.Shard) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Index == b.Index && a.Count == b.Count
}

func shardName(s *results.Shard) string {
	if s == nil {
		return "a whole run"
	}
	return "shard " + s.String()
}

// Compare compares cur with one base run; see Baseline.
func Compare(base, cur results.Part, tol gate.Tolerances) *Comparison {
	return Baseline([]results.Part{base}, cur, tol)
}

// Baseline compares every metric of every group (and overall) of cur with the baseline
// runs, and the thresholds they recorded. It does not check that the runs are comparable (call
// Comparable for each) nor that they are good (see Good).
//
// How a metric is judged (docs/gate.md): by its class (gate.Class) first. A load figure
// (calls_skipped) is the runner's and never judged; overall sums the groups and is judged per
// group; a control group (a policy in ControlPolicies, e.g. naive) is judged only on its hazard
// outcomes, for their presence (zero in every baseline and not zero now: the hazard appeared;
// the reverse: the control lost its power). Then hazards and work counts against the
// baselines' spread and the tolerance, latencies against the baselines' run-to-run spread of
// the statistic (judgeLatency). A move past the tolerance that is not judged a regression
// says why (VerdictNoise, VerdictInfo with a note).
func Baseline(bases []results.Part, cur results.Part, tol gate.Tolerances) *Comparison {
	c := &Comparison{Current: refOf(cur.File, cur.Export)}
	exports := make([]*results.Export, 0, len(bases)+1)
	for _, b := range bases {
		c.Baselines = append(c.Baselines, refOf(b.File, b.Export))
		exports = append(exports, b.Export)
	}
	if len(bases) > 0 {
		latest := slices.MaxFunc(bases, func(a, b results.Part) int { return a.Export.Run.Start.Compare(b.Export.Run.Start) })
		c.Base = refOf(latest.File, latest.Export)
	}
	exports = append(exports, cur.Export)
	controls := controlGroups(cur.Export, bases)
	c.Starved = starvedRuns(bases, cur)
	starved := starvedNote(c.Starved)
	ms := gate.Metrics()
	names := groupNames(exports...)
	for _, name := range names {
		x := judgeCtx{group: name, cg: cur.Export.Group(name), starved: starved, lagGrowth: lagGrowth(bases, cur)}
		for _, b := range bases {
			if g := b.Export.Group(name); g != nil {
				x.bgs = append(x.bgs, g)
			}
		}
		if controls[name] {
			x.control = policyOf(name, bases, cur)
		}
		for _, m := range ms {
			row := judgeMetric(m, tol.For(name, m.Name), x)
			if why := withheldIn(exports, name, m.Name); why != "" {
				row.Verdict, row.Note = VerdictInfo, "withheld ("+why+"): not judged"
			}
			c.count(row)
			c.Rows = append(c.Rows, row)
		}
	}
	c.compareRefuted(bases, cur.Export)
	c.compareThresholds(bases, cur.Export)
	c.compareProbes(bases, cur.Export) // steady_compare.go
	c.CurrentRun = results.CurrentRunStatus(cur.Export)
	c.Findings = findings(c)
	c.Outcome = c.outcome(cur.Export)
	return c
}

// withheldIn says why metric is withheld for group (any group, for overall) in any of the
// exports, "" when it is in none: a figure a run withheld is never judged.
func withheldIn(exports []*results.Export, group, metric string) string {
	for _, e := range exports {
		if why := e.WithheldWhy(group, metric); why != "" {
			return why
		}
	}
	return ""
}

// lagGrowth is how much the current run's generator timer lag p99 (µs) exceeds the worst
// baseline's; 0 when it does not, or when a run has no generator section.
func lagGrowth(bases []results.Part, cur results.Part) float64 {
	if cur.Export.Generator == nil {
		return 0
	}
	worst := 0.0
	for _, b := range bases {
		if b.Export.Generator == nil {
			return 0
		}
		worst = max(worst, b.Export.Generator.TimerLag.P99US)
	}
	return max(0, cur.Export.Generator.TimerLag.P99US-worst)
}

// starvedNote is the note of every row held back because a run was starved ("" when none
// was): the text output says it once (heldBack).
func starvedNote(starved []string) string {
	if len(starved) == 0 {
		return ""
	}
	return "the runner was starved (" + strings.Join(starved, "; ") + ")"
}

// starvedRuns names the runs whose load generator was starved past its bound, and how.
func starvedRuns(bases []results.Part, cur results.Part) []string {
	var out []string
	if why := cur.Export.Generator.Why(); why != "" {
		out = append(out, "current "+why)
	}
	for _, b := range bases {
		if why := b.Export.Generator.Why(); why != "" {
			out = append(out, b.File+" "+why)
		}
	}
	return out
}

// ControlPolicies are the policies whose groups are controls: they are in a workload to show
// the hazard a fault causes (policy naive believes every replay), so their counters are judged
// for showing it, not for how much.
var ControlPolicies = []string{"naive"}

// controlGroups are the groups whose policy (in the baselines, else now) is a control.
func controlGroups(cur *results.Export, bases []results.Part) map[string]bool {
	out := map[string]bool{}
	for _, g := range cur.Groups {
		if slices.Contains(ControlPolicies, policyOf(g.Name, bases, results.Part{Export: cur})) {
			out[g.Name] = true
		}
	}
	return out
}

// policyOf is a group's policy in the baselines (what the group is there to show), or in the
// current run when no baseline has the group.
func policyOf(group string, bases []results.Part, cur results.Part) string {
	for _, b := range bases {
		if g := b.Export.Group(group); g != nil && group != "overall" {
			return g.Policy
		}
	}
	if g := cur.Export.Group(group); g != nil {
		return g.Policy
	}
	return ""
}

func (c *Comparison) count(r Row) {
	switch r.Verdict {
	case VerdictRegressed:
		c.Regressions++
	case VerdictImproved:
		c.Improvements++
	case VerdictInconclusive:
		c.Inconclusive++
	}
}

// groupNames is the groups of every run, the first run's order first, then overall.
func groupNames(es ...*results.Export) []string {
	var names []string
	seen := map[string]bool{}
	for _, e := range es {
		for _, g := range e.Groups {
			if !seen[g.Name] {
				seen[g.Name] = true
				names = append(names, g.Name)
			}
		}
	}
	return append(names, "overall")
}

// mustKeepPassing is the row of a check that must keep passing (a threshold, a steady-state
// probe): pass and fail count the baselines it passed and failed in; cur is whether it passed
// now (nil: not run now), why what it got when it failed. Failing in every baseline and now is
// the same; in some baselines only, flaky there: reported, not judged.
func mustKeepPassing(group, metric string, pass, fail int, cur *bool, why string) Row {
	row := Row{Group: group, Metric: metric, Unit: "pass", Tolerance: "must keep passing"}
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
	if cur != nil {
		row.Current = one(*cur)
	}
	switch {
	case row.Base == nil || row.Current == nil:
		row.Verdict = VerdictMissing
	case fail > 0 && pass > 0:
		row.Verdict = VerdictInfo
		row.Note = fmt.Sprintf("failed in %d of %d baselines: not judged", fail, pass+fail)
	case fail == 0 && !*cur:
		row.Verdict = VerdictRegressed
		row.Note = "now fails: " + why
	case pass == 0 && *cur:
		row.Verdict = VerdictImproved
	case !*cur:
		row.Verdict = VerdictSame
		row.Note = "fails in both"
	default:
		row.Verdict = VerdictSame
	}
	return row
}

// compareThresholds adds a row per threshold recorded in any run: a threshold that passed in
// every baseline and fails now is a regression; one that failed in some baselines is flaky
// there and only reported.
func (c *Comparison) compareThresholds(bases []results.Part, cur *results.Export) {
	var order []string
	type tally struct {
		pass, fail int
		cur        *results.ThresholdResult
	}
	byExpr := map[string]*tally{}
	get := func(expr string) *tally {
		t := byExpr[expr]
		if t == nil {
			t = &tally{}
			byExpr[expr] = t
			order = append(order, expr)
		}
		return t
	}
	for _, b := range bases {
		for _, r := range b.Export.Thresholds {
			t := get(r.Expr)
			if r.Pass {
				t.pass++
			} else {
				t.fail++
			}
		}
	}
	for i := range cur.Thresholds {
		get(cur.Thresholds[i].Expr).cur = &cur.Thresholds[i]
	}
	for _, expr := range order {
		t := byExpr[expr]
		var row Row
		if t.cur == nil {
			row = mustKeepPassing("threshold", expr, t.pass, t.fail, nil, "")
		} else {
			row = mustKeepPassing("threshold", expr, t.pass, t.fail, &t.cur.Pass, t.cur.Actual)
		}
		c.count(row)
		c.Rows = append(c.Rows, row)
	}
}
