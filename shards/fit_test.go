package shards

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/workloads"
)

// The plan of docs/performance.md's per-machine workload, checked against the machine it was
// run on (2 cores, 20,000 descriptors, 28,232 ports, 23 GiB): it fits the memory and the ports;
// six shard processes on two cores are warned about, naming the cores, and so is its ramp of
// 633 sessions a second, more than two loaded cores established (470 a second at worst).
func TestFitWarnsOfCores(t *testing.T) {
	w, err := workloads.Load("../bench/workloads/hold-19k.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := Machine{CPUs: 2, Descriptors: 20000, Ports: 28232, MemoryKiB: 23 << 20}
	warns, err := Fit(w, 6, m, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], "--procs 6 on 2 cores") || !strings.Contains(warns[1], "633 new sessions a second") {
		t.Errorf("warnings %q, want one about 6 processes on 2 cores and one about the ramp", warns)
	}
	if warns, err := Fit(w, 2, Machine{CPUs: 16, MemoryKiB: 64 << 20, Ports: 28232}, true); err != nil || len(warns) != 0 {
		t.Errorf("16 cores, 2 processes: %q %v, want no warning", warns, err)
	}
}

// Past a hard limit of the machine the plan is refused before anything starts, naming the
// limit: memory (MemAvailable), local ports towards the one server address.
func TestFitRefusesPastALimit(t *testing.T) {
	w, err := workloads.Parse("w.yaml", []byte(`name: w
target: {builtin: {session_ttl: 10m}}
phases: [{name: hold, duration: 600s, calls: true}]
groups: [{name: probe, clients: 30000, ramp: 300s, policy: probe}]
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m     Machine
		limit string
		says  string
	}{
		{Machine{CPUs: 64, MemoryKiB: 1 << 20, Ports: 60000}, "memory", "MemAvailable"},
		{Machine{CPUs: 64, MemoryKiB: 64 << 20, Ports: 28232}, "ports", "ip_local_port_range"},
	} {
		_, err := Fit(w, 8, tc.m, true)
		var fe *FitError
		if !errors.As(err, &fe) || fe.Limit != tc.limit || !strings.Contains(fe.Why, tc.says) {
			t.Errorf("%+v: %v, want refused for %s, naming %s", tc.m, err, tc.limit, tc.says)
		}
	}
	// Served from two processes (20,000 descriptors each), each address takes 15,000.
	if _, err := Fit(w, 8, Machine{CPUs: 64, MemoryKiB: 64 << 20, Ports: 28232, Descriptors: 20000}, true); err != nil {
		t.Errorf("two server addresses: %v, want it to fit", err)
	}
	if warns, err := Fit(w, 8, Machine{CPUs: 1, MemoryKiB: 64 << 20, Ports: 60000}, true); err != nil || len(warns) != 1 {
		t.Errorf("one core: %q %v", warns, err)
	}
}

// Sessions to establish faster than the cores can are warned about, naming the ramp.
func TestFitWarnsOfRamp(t *testing.T) {
	w, err := workloads.Parse("w.yaml", []byte(`name: w
target: {builtin: {session_ttl: 10m}}
phases: [{name: hold, duration: 10s, calls: true}]
groups: [{name: probe, clients: 4000, ramp: 1s, policy: probe}]
`))
	if err != nil {
		t.Fatal(err)
	}
	warns, err := Fit(w, 2, Machine{CPUs: 2, MemoryKiB: 64 << 20, Ports: 60000}, true)
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0], "4000 new sessions a second") || !strings.Contains(warns[0], "ramp") {
		t.Errorf("%q %v, want a warning about the ramp", warns, err)
	}
}

// This machine's limits are read (Linux: all four).
func TestThisMachine(t *testing.T) {
	m := ThisMachine()
	if m.CPUs < 1 || m.Descriptors == 0 {
		t.Errorf("%+v", m)
	}
}

// One reference server process holds a stream and a pooled POST a session within its
// descriptors: 19,000 sessions need two processes at 20,000 descriptors, fewer need one.
func TestServersFor(t *testing.T) {
	for _, c := range []struct {
		clients int
		fds     uint64
		want    int
	}{{19000, 20000, 2}, {9000, 20000, 1}, {50000, 20000, 6}, {100, 0, 1}, {100, 100, 1}, {19000, 1 << 20, 1}} {
		if got := ServersFor(c.clients, Machine{Descriptors: c.fds}); got != c.want {
			t.Errorf("ServersFor(%d, %d descriptors) = %d, want %d", c.clients, c.fds, got, c.want)
		}
	}
}
