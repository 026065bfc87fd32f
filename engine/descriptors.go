package engine

import (
	"fmt"
	"syscall"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Descriptors one client's session costs in the run's process: its own sockets (requests and
// the GET stream) and, through the embedded Toxiproxy, the proxy's (faults.Shield feeds
// Toxiproxy's chains in process: the client's socket accepted and the server's dialed;
// mcpchaos bench measured 2.04 per proxied session on the proxy's side, docs/performance.md);
// with an external toxiproxy-server only the client's own remain.
const (
	fdsPerOwnSession     = 4
	fdsPerProxiedSession = fdsPerOwnSession + faults.ProxyDescriptorsPerConn
	fdsSpare             = 256 // the process's own: the reference server, exports, metrics
)

// CheckDescriptors refuses, before anything starts, a workload whose clients, split into procs
// processes on this machine, would run one process out of file descriptors: past the limit
// every further connection fails, and a run would report thousands of connect errors that are
// its own, not the server's. Run checks its own part (procs 1); run --procs checks the whole
// before it starts its processes. It is a fact of the machine, not of the workload: NewPlan
// and validate, which may run elsewhere (a shard's machine, a CI lint job), do not check it.
func CheckDescriptors(w *workloads.Workload, procs int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // cannot tell; the run's connect errors will say it
	}
	return descriptorsFit(w, procs, lim.Cur)
}

// descriptorsFit is checkDescriptors for a given limit (Go raises the soft limit to the hard
// one when a program starts, so the soft limit read is what the run can use).
func descriptorsFit(w *workloads.Workload, procs int, limit uint64) error {
	procs = max(procs, 1)
	each := fdsPerProxiedSession
	if w.Toxiproxy != "" {
		each = fdsPerOwnSession
	}
	share := func(n int) uint64 { return uint64(w.ClientsPerProcess(n)*each + fdsSpare) }
	need := share(procs)
	if need <= limit {
		return nil
	}
	fit := procs
	for fit < 1024 && share(fit) > limit {
		fit++
	}
	return &ConfigError{Field: "groups", Err: fmt.Errorf("one process would need about %d file descriptors (about %d per client's session%s), past its limit of %d (ulimit -n); run it as --procs %d or more, or raise the limit",
		need, each, map[bool]string{true: " through the embedded fault proxy", false: ""}[w.Toxiproxy == ""], limit, fit)}
}
