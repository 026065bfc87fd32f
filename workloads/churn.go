package workloads

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Churn is a group's churn: its clients come and go, each ending its session Every after
// opening it, a share of them (Abandon) without DELETE (docs/workloads.md, "Churn";
// docs/session-leaks.md).
type Churn struct {
	Every   time.Duration // a client ends its session this long after opening it; > 0
	Abandon float64       // the share of sessions ended without DELETE, 0..1
	// During names the phases in which clients churn; nil: every phase. Outside them a
	// client keeps its session (a phase that waits out the TTL while the abandoned sessions
	// expire).
	During []string
}

// minChurnEvery bounds the churn's rate: a session a client keeps less than this is an
// initialize storm, not churn.
const minChurnEvery = 100 * time.Millisecond

var churnSchema = schema{keys: []schemaKey{
	{"every", "set how long a client keeps a session before it ends it and opens a new one, e.g. every: 2s"},
	{"abandon", "set the share of sessions ended without DELETE (the client just stops using them), from 0 to 1, e.g. abandon: 0.8"},
	{"during", "list the phases in which clients churn, e.g. during: [churn] (default: every phase)"},
}}

// churn decodes a group's churn mapping; nil when the group has none. Phase names are
// checked against the phases decoded before the groups.
func (d *decoder) churn(m *mapping, policy string) *Churn {
	f := m.field("churn")
	if f == nil {
		return nil
	}
	cm := d.mapping(f.node, f.path, &churnSchema)
	c := &Churn{}
	if ef := cm.require("every"); ef != nil {
		if v, ok := d.duration(ef); ok && d.checkDuration(ef, v, 0, true) {
			if v < minChurnEvery {
				d.errorf(ef.node, ef.path, "%s is shorter than %s, which would be an initialize storm rather than churn; %s", fmtDur(v), fmtDur(minChurnEvery), ef.hint)
			}
			c.Every = v
		}
	}
	if af := cm.field("abandon"); af != nil {
		c.Abandon = d.share(af)
	}
	if df := cm.field("during"); df != nil {
		c.During = d.phaseList(df)
	}
	if policy != "" && policy != PolicyNaive && policy != PolicyProbe {
		d.errorf(f.key, f.path, "policy %s runs a client library, whose sessions mcpchaos does not end on its own; churn a naive or probe group", policy)
	}
	return c
}

// share reads a number from 0 to 1.
func (d *decoder) share(f *field) float64 {
	var v float64
	switch x := f.node.(type) {
	case nil:
		return 0
	case *ast.FloatNode:
		v = x.Value
	case *ast.IntegerNode:
		n, ok := d.integer(f)
		if !ok {
			return 0
		}
		v = float64(n)
	default:
		d.errorf(f.node, f.path, "must be a number from 0 to 1, got %s; %s", describe(f.node), f.hint)
		return 0
	}
	if math.IsNaN(v) || v < 0 || v > 1 {
		d.errorf(f.node, f.path, "must be from 0 to 1, got %s; %s", nodeText(f.node), f.hint)
		return 0
	}
	return v
}

// phaseList reads a list of names of the workload's phases.
func (d *decoder) phaseList(f *field) []string {
	entries, ok := d.list(f, maxListLen)
	if !ok {
		return nil
	}
	if len(entries) == 0 {
		d.errorf(f.node, f.path, "is empty, so clients would never churn; name the phases, or remove during to churn in every phase")
		return nil
	}
	names := make([]string, 0, len(entries))
	for i, e := range entries {
		v, ok := d.resolve(e)
		if !ok {
			continue
		}
		ef := &field{path: fmt.Sprintf("%s[%d]", f.path, i), node: v, hint: f.hint}
		s, ok := d.str(ef)
		if !ok {
			continue
		}
		if d.phaseNames != nil && !slices.Contains(d.phaseNames, s) {
			d.errorf(ef.node, ef.path, "no phase is named %q; use one of %s", s, strings.Join(d.phaseNames, ", "))
			continue
		}
		names = append(names, s)
	}
	return names
}

// churn is Validate's check of a group's churn.
func (v *validator) churn(f string, c *Churn, policy string, phases []Phase) {
	if c == nil {
		return
	}
	if c.Every < minChurnEvery || c.Every > maxDuration {
		v.add(f+".every", "%s is outside %s..%s", fmtDur(c.Every), fmtDur(minChurnEvery), fmtDur(maxDuration))
	}
	if math.IsNaN(c.Abandon) || c.Abandon < 0 || c.Abandon > 1 {
		v.add(f+".abandon", "%v is outside 0..1", c.Abandon)
	}
	if c.During != nil && len(c.During) == 0 {
		v.add(f+".during", "is empty; nil churns in every phase")
	}
	for i, name := range c.During {
		if !slices.ContainsFunc(phases, func(p Phase) bool { return p.Name == name }) {
			v.add(fmt.Sprintf("%s.during[%d]", f, i), "no phase is named %q", name)
		}
	}
	if policy != PolicyNaive && policy != PolicyProbe {
		v.add(f, "policy %s runs a client library; churn a naive or probe group", policy)
	}
}

// ChurnOn says, for a time since the start, whether c's clients churn then.
func (w *Workload) ChurnOn(c *Churn) func(time.Duration) bool {
	if c == nil || c.During == nil {
		return nil
	}
	return func(el time.Duration) bool {
		for _, p := range w.Phases {
			if el >= p.Start && el < p.End() {
				return slices.Contains(c.During, p.Name)
			}
		}
		return false
	}
}
