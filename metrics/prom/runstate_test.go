package prom

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// gathered reads every series the registry serves as "name{label=value,...} value" lines.
func gathered(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if !strings.HasSuffix(mf.GetHelp(), docRef) {
			t.Errorf("%s: HELP %q does not point to docs/metrics.md", mf.GetName(), mf.GetHelp())
		}
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			out[mf.GetName()+"{"+strings.Join(ls, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	return out
}

func TestRunCollector(t *testing.T) {
	state := RunState{Phase: "quiet", Faults: []string{"proxy-restart"}}
	c := NewRunCollector([]string{"active", "quiet", "after-ttl"}, []string{"lb-idle-timeout", "proxy-restart"},
		map[string]string{"release": "v1.4.2"}, func() RunState { return state })
	reg := prometheus.NewPedanticRegistry()
	if err := prometheus.WrapRegistererWith(prometheus.Labels{"run_id": "a1b2c3d4"}, reg).Register(c); err != nil {
		t.Fatal(err)
	}
	got := gathered(t, reg)
	for series, want := range map[string]float64{
		"mcpchaos_run_info{run_id=a1b2c3d4}":                             1,
		"mcpchaos_run_label{label=release,run_id=a1b2c3d4,value=v1.4.2}": 1,
		"mcpchaos_phase{phase=active,run_id=a1b2c3d4}":                   0,
		"mcpchaos_phase{phase=quiet,run_id=a1b2c3d4}":                    1,
		"mcpchaos_phase{phase=after-ttl,run_id=a1b2c3d4}":                0,
		"mcpchaos_fault_active{fault=lb-idle-timeout,run_id=a1b2c3d4}":   0,
		"mcpchaos_fault_active{fault=proxy-restart,run_id=a1b2c3d4}":     1,
		"mcpchaos_run_finished{run_id=a1b2c3d4}":                         0,
	} {
		if v, ok := got[series]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", series, v, ok, want)
		}
	}
	state = RunState{Finished: true}
	got = gathered(t, reg)
	if got["mcpchaos_run_finished{run_id=a1b2c3d4}"] != 1 || got["mcpchaos_phase{phase=quiet,run_id=a1b2c3d4}"] != 0 || got["mcpchaos_fault_active{fault=proxy-restart,run_id=a1b2c3d4}"] != 0 {
		t.Errorf("after the run: %v", got)
	}
}
