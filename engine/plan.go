package engine

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Plan is what a run will do: a validated workload (a shard's share of it when sharded), the
// thresholds to judge and when to start. NewPlan builds it without I/O.
//
// A Plan cannot be changed once NewPlan has checked it: its fields are its own (the workload
// a deep copy of the caller's, which the caller may go on changing without effect), and its
// accessors hand out copies. What a caller may choose is a PlanOption, checked by NewPlan.
// The zero Plan is no plan: Run refuses it with a *ConfigError.
type Plan struct {
	workload   *workloads.Workload
	shard      *Shard           // nil: the whole fleet
	startAt    time.Time        // zero: as soon as set up
	thresholds []gate.Threshold // the workload's, then the options'
	// labels say what the run tested (release, commit, environment): the export records them,
	// compare shows them, the report puts them on its trend axis.
	labels map[string]string
	// noSchemaCheck sends the workload's tool arguments without checking them against the
	// tool's inputSchema first (for servers whose schema lies).
	noSchemaCheck bool
}

// Workload is a copy of the workload the plan runs (a shard's share of it when sharded, with
// the options applied): changing it changes nothing of the plan.
func (p *Plan) Workload() *workloads.Workload { return p.workload.Clone() }

// Shard is the part of the fleet the plan runs (WithShard); nil: the whole fleet.
func (p *Plan) Shard() *Shard {
	if p.shard == nil {
		return nil
	}
	s := *p.shard
	return &s
}

// StartAt is when the clients start (WithStartAt); zero: as soon as the run is set up.
func (p *Plan) StartAt() time.Time { return p.startAt }

// Thresholds are the thresholds the run is judged by: the workload's, then WithThresholds'.
func (p *Plan) Thresholds() []gate.Threshold { return slices.Clone(p.thresholds) }

// Labels are the run's labels (WithLabels).
func (p *Plan) Labels() map[string]string { return maps.Clone(p.labels) }

// NoSchemaCheck says the tool arguments are sent without checking them against the tool's
// inputSchema first (WithNoSchemaCheck).
func (p *Plan) NoSchemaCheck() bool { return p.noSchemaCheck }

// PlanOption changes a plan before NewPlan checks it, once.
type PlanOption func(*planDraft)

type planDraft struct {
	target    *workloads.Target
	toxiproxy *string
	groups    *GroupOverrides
	procs     int // run --procs: the processes the whole workload will be split into
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
	return func(d *planDraft) { d.plan.shard = &Shard{Index: index, Count: count} }
}

// WithProcs says the whole workload runs as n local shard processes (run --procs n): each
// process must be able to hold its share, not the whole fleet.
func WithProcs(n int) PlanOption {
	return func(d *planDraft) { d.procs = n }
}

// MaxShards bounds a plan's shard count.
const MaxShards = 10000

// Shard is the part of a fleet one process runs: in every group, the clients whose number
// modulo Count is Index. (The export records it as a results.Shard, with the agreed start
// time and how late this shard came.)
type Shard struct{ Index, Count int }

func (s *Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ShardError is a shard that is not one of its count (WithShard's numbers out of range).
type ShardError struct {
	Shard Shard
	Why   string
}

func (e *ShardError) Error() string { return fmt.Sprintf("shard %s: %s", &e.Shard, e.Why) }

// WithStartAt starts the clients at t (shards starting together).
func WithStartAt(t time.Time) PlanOption {
	return func(d *planDraft) { d.plan.startAt = t }
}

// WithThresholds adds thresholds to the workload's; those with AbortOnFail stop the run as
// soon as they fail for good.
func WithThresholds(ths ...gate.Threshold) PlanOption {
	return func(d *planDraft) { d.plan.thresholds = append(d.plan.thresholds, ths...) }
}

// WithLabels labels the run (key=value pairs such as release=v1.4.2); later labels of the
// same key win.
func WithLabels(labels map[string]string) PlanOption {
	return func(d *planDraft) {
		if d.plan.labels == nil {
			d.plan.labels = map[string]string{}
		}
		for k, v := range labels {
			d.plan.labels[k] = v
		}
	}
}

// WithNoSchemaCheck skips the check of the workload's tool arguments against the tool's
// inputSchema before the run.
func WithNoSchemaCheck() PlanOption {
	return func(d *planDraft) { d.plan.noSchemaCheck = true }
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

// NewPlan applies the options to w (which it does not change) and checks the result once,
// with Workload.Validate: a workload changed in Go is held to the rules of a workload file. Its
// error is a *ConfigError naming the field at fault (groups[0].clients, thresholds[1], shard,
// toxiproxy, target.url, labels); it never panics on a value a caller can set.
func NewPlan(w *workloads.Workload, opts ...PlanOption) (*Plan, error) {
	if w == nil {
		return nil, &ConfigError{Field: "workload", Err: errors.New("no workload; load one with workloads.Load or workloads.Builtin")}
	}
	var d planDraft
	for _, o := range opts {
		if o != nil { // a nil option (an unset variable of PlanOption) is no option
			o(&d)
		}
	}
	p := d.plan
	if err := invalid(w.Validate()); err != nil {
		return nil, err
	}
	w = w.AsRun() // a workload changed in Go is named as such in the export
	if err := invalid(w.CheckThresholds("thresholds (added)", p.thresholds)); err != nil {
		return nil, err
	}
	p.thresholds = append(append([]gate.Threshold(nil), w.Thresholds...), p.thresholds...)
	if d.toxiproxy != nil {
		c := *w
		c.Toxiproxy = *d.toxiproxy
		w = &c
	}
	if d.target != nil {
		nw, err := w.WithTarget(*d.target)
		if err != nil {
			return nil, &ConfigError{Field: "target", Err: fmt.Errorf("%s: %w", whereOf(*d.target), err)}
		}
		w = nw
	}
	if d.groups != nil {
		w = overrideGroups(w, *d.groups)
	}
	if d.toxiproxy != nil || d.target != nil || d.groups != nil {
		if err := invalid(w.Validate()); err != nil { // what the options changed
			return nil, err
		}
	}
	if s := p.shard; s != nil {
		switch {
		case s.Count < 1 || s.Count > MaxShards:
			return nil, &ConfigError{Field: "shard", Err: &ShardError{*s, fmt.Sprintf("the shard count must be between 1 and %d", MaxShards)}}
		case s.Index < 0 || s.Index >= s.Count:
			return nil, &ConfigError{Field: "shard", Err: &ShardError{*s, fmt.Sprintf("the index counts from 0, so it must be between 0 and %d", s.Count-1)}}
		}
		w = shardWorkload(w, s)
	}
	if err := w.CheckClientsInProcesses(max(d.procs, 1)); err != nil { // what one process runs
		return nil, &ConfigError{Field: "groups", Err: err}
	}
	if err := checkLabels(p.labels); err != nil {
		return nil, &ConfigError{Field: "labels", Err: err}
	}
	p.workload = w.Clone() // the caller's workload may change after this; the plan's does not
	return &p, nil
}

// invalid is Validate's error as a ConfigError naming the first field at fault.
func invalid(err error) error {
	var ve *workloads.ValidationError
	if err == nil || !errors.As(err, &ve) || len(ve.Errs) == 0 {
		return err
	}
	return &ConfigError{Field: ve.Errs[0].Field, Err: err}
}

func whereOf(t workloads.Target) string {
	if t.Where != "" {
		return t.Where
	}
	return "target"
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
func shardWorkload(w *workloads.Workload, s *Shard) *workloads.Workload {
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

// labelKey is what a run label's key may be: a word a dashboard and a shell take as it is.
var labelKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,62}$`)

// checkLabels checks each label is what the export, the live metrics and compare can show:
// a key that is a word, a short printable value.
func checkLabels(labels map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v := labels[k]
		switch {
		case k == "":
			return errors.New("a run label needs a key: write key=value, e.g. release=v1.4.2")
		case !labelKey.MatchString(k):
			return fmt.Errorf("%q: the key %q must start with a letter or _ and hold only letters, digits, _, . and - (at most 63)", k+"="+v, k)
		case v == "" || len(v) > 200 || strings.IndexFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
			return fmt.Errorf("%q: the value must be 1 to 200 printable characters", k+"="+v)
		}
	}
	return nil
}
