package engine

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpchaos/mcpchaos/workloads"
)

func TestDescriptorsFit(t *testing.T) {
	w := &workloads.Workload{Groups: []workloads.GroupSpec{{Clients: 2000}, {Clients: 2000}}}
	if err := descriptorsFit(w, 1, 1<<20); err != nil {
		t.Errorf("4,000 clients within 1M descriptors: %v", err)
	}
	err := descriptorsFit(w, 1, 20000)
	if err == nil || !strings.Contains(err.Error(), "--procs 2 or more") || !strings.Contains(err.Error(), "limit of 20000") {
		t.Errorf("4,000 proxied clients (about 24,256 descriptors) under 20,000: %v", err)
	}
	if err := descriptorsFit(w, 2, 20000); err != nil {
		t.Errorf("as 2 processes they fit: %v", err)
	}
	ext := *w
	ext.Toxiproxy = "http://127.0.0.1:8474"
	if err := descriptorsFit(&ext, 1, 20000); err != nil {
		t.Errorf("with an external toxiproxy-server the proxies' descriptors are not this process's: %v", err)
	}
}

// Run refuses, before anything starts, the fleet one process cannot hold with this machine's
// descriptor limit (it would otherwise report its own exhaustion as thousands of the server's
// connect errors); NewPlan, a fact of the workload, does not judge the machine.
func TestRunRefusesPastTheDescriptorLimit(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	clients := int(lim.Cur/fdsPerProxiedSession) + 10
	if clients > workloads.MaxClientsPerProcess {
		t.Skipf("descriptor limit %d: more clients than one process may run anyway", lim.Cur)
	}
	w, err := workloads.Builtin("seed-incident-fast")
	if err != nil {
		t.Fatal(err)
	}
	w.Groups[0].Clients = clients
	plan, err := NewPlan(w)
	if err != nil {
		t.Fatalf("NewPlan judged the machine: %v", err)
	}
	exp, err := Run(t.Context(), plan, WithStderr(testWriter{t}))
	var ce *ConfigError
	if exp != nil || !errors.As(err, &ce) || ce.Field != "groups" || !strings.Contains(err.Error(), "ulimit -n") {
		t.Fatalf("%d clients with a limit of %d descriptors: export %v, %v", clients, lim.Cur, exp != nil, err)
	}
	if err := CheckDescriptors(w, 4); err != nil {
		t.Errorf("as 4 processes: %v", err)
	}
}
