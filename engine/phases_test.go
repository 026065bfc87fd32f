package engine

import (
	"reflect"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// The export's phase timeline is the plan's, cut at the run's end; the faults in force are
// those applied and not yet removed; the view names the phase at a moment.
func TestPhasesAndFaultsInForce(t *testing.T) {
	phases := []workloads.Phase{
		{Name: "active", Start: 0, Duration: time.Second},
		{Name: "quiet", Start: time.Second, Duration: 6500 * time.Millisecond},
		{Name: "after-ttl", Start: 7500 * time.Millisecond, Duration: 2500 * time.Millisecond},
	}
	got := phasesRun(phases, 10*time.Second)
	if len(got) != 3 || !reflect.DeepEqual(got[1], results.PhaseAt{Phase: "quiet", StartS: 1, EndS: 7.5}) {
		t.Errorf("whole run: %+v", got)
	}
	got = phasesRun(phases, 3*time.Second) // interrupted in the quiet phase
	if len(got) != 2 || got[1].EndS != 3 {
		t.Errorf("interrupted at 3s: %+v", got)
	}

	r := &runner{}
	r.noteFault(faultChange("lb-idle-timeout", "naive", true, 1200*time.Millisecond))
	r.noteFault(faultChange("proxy-restart", "naive", true, 1800*time.Millisecond))
	r.noteFault(faultChange("proxy-restart", "probe", true, 1800*time.Millisecond))
	r.noteFault(faultChange("lb-idle-timeout", "naive", false, 1600*time.Millisecond))
	if fs := r.log.inForce(); len(fs) != 1 || fs[0] != "proxy-restart" {
		t.Errorf("in force: %v, want [proxy-restart]", fs)
	}
	r.noteFault(faultChange("proxy-restart", "naive", false, 6*time.Second))
	if fs := r.log.inForce(); len(fs) != 1 { // still on the probe group's proxy
		t.Errorf("in force: %v, want [proxy-restart]", fs)
	}
	r.noteFault(faultChange("proxy-restart", "probe", false, 6*time.Second))
	if fs := r.log.inForce(); len(fs) != 0 {
		t.Errorf("in force: %v, want none", fs)
	}
	// The export's form is made once, at the end: each fault on each proxy, on and off.
	fs, _ := r.log.exported()
	want := []results.FaultAt{
		{Fault: "lb-idle-timeout", Proxy: "naive", AddedAtS: 1.2, RemovedAtS: 1.6},
		{Fault: "proxy-restart", Proxy: "naive", AddedAtS: 1.8, RemovedAtS: 6},
		{Fault: "proxy-restart", Proxy: "probe", AddedAtS: 1.8, RemovedAtS: 6},
	}
	if !reflect.DeepEqual(fs, want) {
		t.Errorf("exported faults:\n%+v\nwant\n%+v", fs, want)
	}

	start := time.Now()
	v := &View{Start: start, phases: phases}
	for at, want := range map[time.Duration]string{-time.Second: "", 0: "active", 2 * time.Second: "quiet", 9 * time.Second: "after-ttl", 11 * time.Second: ""} {
		if p := v.Phase(start.Add(at)); p != want {
			t.Errorf("phase at %s: %q, want %q", at, p, want)
		}
	}
}

func faultChange(fault, proxy string, added bool, at time.Duration) faults.Change {
	return faults.Change{At: at, Fault: fault, Proxy: proxy, Added: added}
}
