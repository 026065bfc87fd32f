package engine

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/workloads"
)

func seedFast(t testing.TB) *workloads.Workload {
	t.Helper()
	w, err := workloads.Builtin("seed-incident-fast")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A workload changed in Go is held to the rules of a file: NewPlan refuses every invalid value
// a caller can set with a ConfigError naming the field, before anything starts.
func TestNewPlanRefusesWhatGoCallersCanSet(t *testing.T) {
	th := func(expr string) gate.Threshold {
		x, err := gate.ParseThreshold(expr)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	cases := []struct {
		field  string
		change func(w *workloads.Workload)
		opts   []PlanOption
	}{
		{"groups[0].clients", func(w *workloads.Workload) { w.Groups[0].Clients = -3 }, nil},
		{"groups[1].clients", func(w *workloads.Workload) { w.Groups[1].Clients = 0 }, nil},
		{"groups[1].name", func(w *workloads.Workload) { w.Groups[1].Name = w.Groups[0].Name }, nil},
		{"groups[0].name", func(w *workloads.Workload) { w.Groups[0].Name = "Naive Group" }, nil},
		{"groups[1].probe", func(w *workloads.Workload) { w.Groups[1].Probe = "ping-pong" }, nil},
		{"groups[0].policy", func(w *workloads.Workload) { w.Groups[0].Policy = "optimistic" }, nil},
		{"groups[0].concurrency", func(w *workloads.Workload) { w.Groups[0].Concurrency = 0 }, nil},
		{"groups[0].call_every", func(w *workloads.Workload) { w.Groups[0].CallEvery = 0 }, nil},
		{"groups[0].retries", func(w *workloads.Workload) { w.Groups[0].Retries = -1 }, nil},
		{"groups[0].dead_statuses", func(w *workloads.Workload) { w.Groups[0].DeadStatuses = nil }, nil},
		{"groups[0].dead_statuses[0]", func(w *workloads.Workload) { w.Groups[0].DeadStatuses = []int{42} }, nil},
		{"groups[0].ramp", func(w *workloads.Workload) { w.Groups[0].Ramp = time.Hour }, nil},
		{"groups[0].tool", func(w *workloads.Workload) { w.Groups[0].Tool = "rm -rf" }, nil},
		{"groups[0].protocol", func(w *workloads.Workload) { w.Groups[0].Protocol = "1999-01-01" }, nil},
		{"groups", func(w *workloads.Workload) { w.Groups = nil }, nil},
		{"phases[1].duration", func(w *workloads.Workload) { w.Phases[1].Duration = -time.Second }, nil},
		{"phases", func(w *workloads.Workload) { w.Phases = nil }, nil},
		{"duration", func(w *workloads.Workload) { w.Duration = time.Hour }, nil},
		{"target.builtin.session_ttl", func(w *workloads.Workload) { w.Target.Builtin.SessionTTL = 0; w.Target.SessionTTL = 0 }, nil},
		{"target.builtin.replicas", func(w *workloads.Workload) { w.Target.Builtin.Replicas = -1 }, nil},
		{"target", func(w *workloads.Workload) { w.Target.Builtin = nil }, nil},
		{"faults[0].toxic", func(w *workloads.Workload) { w.Faults[0].Toxic = "meteor" }, nil},
		{"faults[1].groups[0]", func(w *workloads.Workload) { w.Faults[1].Groups = []string{"nobody"} }, nil},
		{"faults[0]", func(w *workloads.Workload) { w.Faults[0].At = w.Duration }, nil},
		{"faults[1].name", func(w *workloads.Workload) { w.Faults[1].Name = w.Faults[0].Name }, nil},
		{"thresholds[0]", func(w *workloads.Workload) {
			w.Thresholds = []gate.Threshold{{Expr: "probe.misattributed_errors == 0", Scope: "probe", Op: "=="}}
		}, nil},
		{"thresholds (added)[0]", nil, []PlanOption{WithThresholds(th("nobody.drops == 0"))}},
		{"thresholds (added)[0]", nil, []PlanOption{WithThresholds(gate.Threshold{Expr: "probe.drops == 0", AbortOnFail: true})}},
		{"toxiproxy", nil, []PlanOption{WithToxiproxy("ftp://user:pw@host")}},
		{"target.url", nil, []PlanOption{WithTarget(workloads.Target{URL: "gopher://x", SessionTTL: time.Second})}},
		{"shard", nil, []PlanOption{WithShard(2, 2)}},
		{"labels", nil, []PlanOption{WithLabels(map[string]string{"": "x"})}},
		{"labels", nil, []PlanOption{WithLabels(map[string]string{"9x": "1"})}},
		{"labels", nil, []PlanOption{WithLabels(map[string]string{"release": "v1\n"})}},
	}
	for _, c := range cases {
		w := seedFast(t)
		if c.change != nil {
			c.change(w)
		}
		p, err := NewPlan(w, c.opts...)
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: got plan %v, error %v; want a ConfigError", c.field, p != nil, err)
			continue
		}
		if ce.Field != c.field {
			t.Errorf("%s: the error names %q: %v", c.field, ce.Field, err)
		}
		if !strings.Contains(err.Error(), c.field) && c.field != "shard" && c.field != "labels" {
			t.Errorf("%s: the message does not name the field: %v", c.field, err)
		}
	}
	if _, err := NewPlan(nil); err == nil {
		t.Error("a nil workload planned")
	}
	if _, err := NewPlan(seedFast(t)); err != nil {
		t.Errorf("the built-in as it is: %v", err)
	}
}

// FuzzNewPlan changes a built-in workload's fields to values a Go caller could set (one field
// per byte of fields, each from n and s): NewPlan returns a plan or a ConfigError, never
// panics, and a plan it returns holds what Validate promises.
func FuzzNewPlan(f *testing.F) {
	f.Add([]byte{0}, int64(-3), "x")
	f.Add([]byte{1}, int64(0), "naive")
	f.Add([]byte{2, 3}, int64(1), "bogus")
	f.Add([]byte{5, 6, 9}, int64(math.MinInt64), "")
	f.Add([]byte{9}, int64(math.MaxInt64), "ping")
	f.Add([]byte{14, 13}, int64(7), "redis://")
	f.Add([]byte{17}, int64(1<<40), "ttl")
	f.Add([]byte{24, 25}, int64(2), "probe.drops > 5")
	f.Add([]byte{26, 19, 0}, int64(-1), "echo")
	f.Fuzz(func(t *testing.T, fields []byte, n int64, s string) {
		if len(fields) > 8 {
			fields = fields[:8]
		}
		w := seedFast(t)
		var opts []PlanOption
		for i, field := range fields {
			mutate(w, field, n+int64(i), s, &opts)
		}
		p, err := NewPlan(w, opts...)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("fields %v = %d/%q: %T %v, want a ConfigError", fields, n, s, err, err)
			}
			return
		}
		if err := p.Workload().Validate(); err != nil && p.Shard() == nil {
			t.Fatalf("fields %v = %d/%q: planned a workload that does not validate: %v", fields, n, s, err)
		}
	})
}

// mutate sets one field of w (chosen by which) from n or s.
func mutate(w *workloads.Workload, which uint8, n int64, s string, opts *[]PlanOption) {
	g := &w.Groups[int(uint64(n)%uint64(len(w.Groups)))]
	d := time.Duration(n)
	switch which % 27 {
	case 0:
		g.Clients = int(n)
	case 1:
		g.Name = s
	case 2:
		g.Probe = s
	case 3:
		g.Policy = s
	case 4:
		g.Concurrency = int(n)
	case 5:
		g.CallEvery = d
	case 6:
		g.Ramp = d
	case 7:
		g.Retries = int(n)
	case 8:
		g.DeadStatuses = []int{int(n)}
	case 9:
		g.RequestTimeout = d
	case 10:
		w.Phases[int(uint64(n)%uint64(len(w.Phases)))].Duration = d
	case 11:
		w.Duration = d
	case 12:
		w.Target.Builtin.SessionTTL = d
	case 13:
		w.Target.Builtin.Replicas = int(n)
	case 14:
		w.Target.Builtin.EventLog = s
	case 15:
		w.Faults[int(uint64(n)%uint64(len(w.Faults)))].At = d
	case 16:
		w.Faults[int(uint64(n)%uint64(len(w.Faults)))].For = d
	case 17:
		w.Faults[int(uint64(n)%uint64(len(w.Faults)))].Toxic = s
	case 18:
		w.Faults[0].Attributes = map[string]any{s: n}
	case 19:
		w.Groups = append(w.Groups, *g)
	case 20:
		w.Target.Builtin.RetentionEvents = int(n)
	case 21:
		*opts = append(*opts, WithShard(int(n), int(n>>8)))
	case 22:
		*opts = append(*opts, WithTarget(workloads.Target{URL: s, SessionTTL: d}))
	case 23:
		*opts = append(*opts, WithToxiproxy(s))
	case 24:
		*opts = append(*opts, WithLabels(map[string]string{s: strconv.FormatInt(n, 36)}))
	case 25:
		th, err := gate.ParseThreshold(s)
		if err != nil {
			th = gate.Threshold{Expr: s, Scope: s} // a value not made by the parser
		}
		th.AbortOnFail = n%2 == 0
		*opts = append(*opts, WithThresholds(th))
	case 26:
		*opts = append(*opts, WithGroupOverrides(GroupOverrides{Tool: s, Probe: s, DeadStatuses: []int{int(n)}}))
	}
}
