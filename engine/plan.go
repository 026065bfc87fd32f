package engine

import (
	"fmt"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Plan is what a run will do: a validated workload (a shard's share of it when sharded), the
// thresholds to judge and when to start. NewPlan builds it without I/O.
type Plan struct {
	Workload   *workloads.Workload
	Shard      *results.Shard   // nil: the whole fleet
	StartAt    time.Time        // zero: as soon as set up
	Thresholds []gate.Threshold // the workload's, then the options'
	// Labels say what the run tested (release, commit, environment): the export records them,
	// compare shows them, the report puts them on its trend axis.
	Labels map[string]string
	// NoSchemaCheck sends the workload's tool arguments without checking them against the
	// tool's inputSchema first (for servers whose schema lies).
	NoSchemaCheck bool
}

// PlanOption changes a plan before NewPlan checks it, once.
type PlanOption func(*planDraft)

type planDraft struct {
	target    *workloads.Target
	toxiproxy *string
	groups    *GroupOverrides
	plan      Plan
}

// WithTarget replaces the workload's target (a --target URL and its connection settings).
// Phases that last "ttl" are laid out again from its session TTL.
func WithTarget(t workloads.Target) PlanOption {
	return func(d *planDraft) { d.target = &t }
}

// WithToxiproxy creates the run's proxies on the toxiproxy-server with this API URL instead
// of embedded Toxiproxy.
func WithToxiproxy(api string) PlanOption {
	return func(d *planDraft) { d.toxiproxy = &api }
}

// WithShard runs every count-th client of each group, from client index (counted from 0).
func WithShard(index, count int) PlanOption {
	return func(d *planDraft) { d.plan.Shard = &results.Shard{Index: index, Count: count} }
}

// WithStartAt starts the clients at t (shards starting together).
func WithStartAt(t time.Time) PlanOption {
	return func(d *planDraft) { d.plan.StartAt = t }
}

// WithThresholds adds thresholds to the workload's; those with AbortOnFail stop the run as
// soon as they fail for good.
func WithThresholds(ths ...gate.Threshold) PlanOption {
	return func(d *planDraft) { d.plan.Thresholds = append(d.plan.Thresholds, ths...) }
}

// WithLabels labels the run (key=value pairs such as release=v1.4.2); later labels of the
// same key win.
func WithLabels(labels map[string]string) PlanOption {
	return func(d *planDraft) {
		if d.plan.Labels == nil {
			d.plan.Labels = map[string]string{}
		}
		for k, v := range labels {
			d.plan.Labels[k] = v
		}
	}
}

// WithNoSchemaCheck skips the check of the workload's tool arguments against the tool's
// inputSchema before the run.
func WithNoSchemaCheck() PlanOption {
	return func(d *planDraft) { d.plan.NoSchemaCheck = true }
}

// GroupOverrides replace what every group of a workload says (run --tool, --tool-args,
// --probe, --dead-statuses, --from-inspect); zero fields leave the workload's.
type GroupOverrides struct {
	Tool         string
	Arguments    map[string]any
	Probe        string
	DeadStatuses []int
}

// WithGroupOverrides applies o to every group of the workload.
func WithGroupOverrides(o GroupOverrides) PlanOption {
	return func(d *planDraft) { d.groups = &o }
}

// NewPlan applies the options to w (which it does not change) and checks the result once.
func NewPlan(w *workloads.Workload, opts ...PlanOption) (*Plan, error) {
	if w == nil || len(w.Groups) == 0 {
		return nil, configErr("the workload has no groups")
	}
	var d planDraft
	for _, o := range opts {
		o(&d)
	}
	p := d.plan
	extra := p.Thresholds
	p.Thresholds = append(append([]gate.Threshold(nil), w.Thresholds...), extra...)
	if err := checkThresholds(w, extra); err != nil {
		return nil, err
	}
	if d.toxiproxy != nil {
		if msg := workloads.CheckToxiproxyURL(*d.toxiproxy); msg != "" {
			return nil, configErr("toxiproxy %s", msg)
		}
		c := *w
		c.Toxiproxy = *d.toxiproxy
		w = &c
	}
	if d.target != nil {
		nw, err := w.WithTarget(*d.target)
		if err != nil {
			return nil, &ConfigError{fmt.Errorf("%s: %w", whereOf(*d.target), err)}
		}
		w = nw
	}
	if d.groups != nil {
		w = overrideGroups(w, *d.groups)
	}
	if s := p.Shard; s != nil {
		if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
			return nil, configErr("shard %d/%d: the index counts from 0 and must be below the count", s.Index, s.Count)
		}
		if !p.StartAt.IsZero() {
			at := p.StartAt.UTC()
			s.StartAt = &at
		}
		w = shardWorkload(w, s)
	}
	if err := w.CheckClientsPerProcess(); err != nil { // what this process runs, shard or whole
		return nil, &ConfigError{err}
	}
	for k := range p.Labels {
		if k == "" {
			return nil, configErr("a run label needs a key: write key=value, e.g. release=v1.4.2")
		}
	}
	p.Workload = w
	return &p, nil
}

func whereOf(t workloads.Target) string {
	if t.Where != "" {
		return t.Where
	}
	return "target"
}

// checkThresholds checks that every added threshold names a group of w, and that those that
// abort can be judged before the end.
func checkThresholds(w *workloads.Workload, ths []gate.Threshold) error {
	groups := map[string]bool{"overall": true}
	for _, g := range w.Groups {
		groups[g.Name] = true
	}
	for _, th := range ths {
		if !groups[th.Scope] {
			return configErr("threshold %q: workload %s has no group %q", th.Expr, w.Name, th.Scope)
		}
		if th.AbortOnFail {
			if err := th.EarlyError(); err != nil {
				return configErr("threshold %q: %v", th.Expr, err)
			}
		}
	}
	return nil
}

// overrideGroups is w with o applied to every group. A tool given this way has no line in the
// workload: one the server lacks is still an error, said against the flag.
func overrideGroups(w *workloads.Workload, o GroupOverrides) *workloads.Workload {
	cp := *w
	cp.Groups = append([]workloads.GroupSpec(nil), w.Groups...)
	for i := range cp.Groups {
		g := &cp.Groups[i]
		if o.Tool != "" {
			g.Tool, g.ToolWhere = o.Tool, "--tool"
			if o.Arguments == nil {
				g.Arguments, g.ArgumentsWhere = nil, "" // the workload's were for its own tool
			}
		}
		if o.Arguments != nil {
			g.Arguments, g.ArgumentsWhere = o.Arguments, "--tool-args"
		}
		if o.Probe != "" {
			g.Probe = o.Probe
		}
		if o.DeadStatuses != nil {
			g.DeadStatuses = o.DeadStatuses
		}
	}
	return &cp
}

// shardWorkload is the part of w that shard s runs: in every group, the clients whose number
// modulo the shard count is the shard's index. Interleaving keeps each shard's share spread
// over the whole ramp, as the clients of the whole run would be. A group whose clients are
// fewer than the shards has none on some shards; it still has its proxy and its (empty)
// numbers there, so that every shard's export has every group. The workload's name and hash
// are unchanged: they identify the run the shards belong to.
func shardWorkload(w *workloads.Workload, s *results.Shard) *workloads.Workload {
	cp := *w
	cp.Groups = append([]workloads.GroupSpec(nil), w.Groups...)
	for i := range cp.Groups {
		cp.Groups[i].Clients = shareOf(w.Groups[i].Clients, s.Index, s.Count)
	}
	return &cp
}

// shareOf is how many of clients 0..n-1 are congruent to index modulo count.
func shareOf(n, index, count int) int {
	if index >= n {
		return 0
	}
	return (n-index-1)/count + 1
}
