package shards

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// MaxProcs is the most shard processes a --procs run starts.
const MaxProcs = 64

// What a held session costs on this machine, measured with `mcpchaos bench` (docs/performance.md),
// and what a process costs before its first session. The checks below are estimates from these
// figures; they refuse only past a hard limit of the machine, and warn where a run would likely
// starve.
const (
	kibPerSessionClient  = 14                             // the client side of a held session (12.2–13.8 KiB measured)
	kibPerSessionProxied = faults.ProxyBytesPerConn >> 10 // the embedded fault proxy's side (28.5–28.6 KiB, rounded up)
	kibPerSessionServer  = 30                             // the reference server's side (about 28 KiB)
	mibPerProcess        = 40                             // a process's runtime, Toxiproxy and buffers before its sessions
	// establishedPerCore is how many sessions a core establishes a second through the proxy,
	// the server beside it: 470–2,142 a second on two loaded cores, so about 235 at worst.
	establishedPerCore = 235
)

// Machine is what this machine gives a run: cores, descriptors per process, local ports
// towards one server address, and memory available.
type Machine struct {
	CPUs        int    // the CPUs this process may run on
	Descriptors uint64 // RLIMIT_NOFILE, per process (0: unknown)
	Ports       int    // the ephemeral port range's size (0: unknown)
	MemoryKiB   uint64 // MemAvailable (0: unknown)
}

// ThisMachine reads the machine's limits (Linux: /proc; elsewhere what is known).
func ThisMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU()}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		m.Descriptors = lim.Cur
	}
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			lo, err1 := strconv.Atoi(f[0])
			hi, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && hi >= lo {
				m.Ports = hi - lo + 1
			}
		}
	}
	m.MemoryKiB = memAvailable()
	return m
}

func memAvailable() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.ParseUint(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// Fewest is the fewest shard processes whose parts of w fit a process's descriptors on this
// machine (engine.CheckDescriptors), 1 for most workloads; MaxProcs+1 when none up to MaxProcs
// does.
func Fewest(w *workloads.Workload) int {
	for n := 1; n <= MaxProcs; n++ {
		if engine.CheckDescriptors(w, n) == nil {
			return n
		}
	}
	return MaxProcs + 1
}

// FitError is a plan that cannot run on this machine: Limit names what it would pass.
type FitError struct {
	Limit string // "memory", "ports", "descriptors"
	Why   string
}

func (e *FitError) Error() string { return e.Why }

// Fit checks a plan of procs shard processes for w against m before anything starts. It
// refuses (a FitError) a plan past a hard limit: the memory its sessions need, or more held
// connections to the one server address than the machine has local ports. It warns, in
// sentences naming the limit, where the run would likely starve: more shard processes than
// cores, or sessions to establish faster than the cores establish them. serve says the
// reference server runs on this machine too (the built-in target).
func Fit(w *workloads.Workload, procs int, m Machine, serve bool) (warnings []string, err error) {
	procs = max(procs, 1)
	clients := w.Clients()
	kib := uint64(kibPerSessionClient)
	if w.Toxiproxy == "" {
		kib += kibPerSessionProxied
	}
	if serve {
		kib += kibPerSessionServer
	}
	need := uint64(clients)*kib + uint64(procs+1)*mibPerProcess*1024
	if m.MemoryKiB > 0 && need > m.MemoryKiB {
		return nil, &FitError{"memory", fmt.Sprintf("%d sessions need about %d MiB (%d KiB a session%s, %d MiB a process), past the %d MiB this machine has available (MemAvailable): run fewer clients, or shard across machines (deploy/kubernetes)",
			clients, need/1024, kib, map[bool]string{true: " through the embedded fault proxy", false: ""}[w.Toxiproxy == ""], mibPerProcess, m.MemoryKiB/1024)}
	}
	// The built-in target is served from ServersFor processes, each on a port of its own: the
	// local ports are counted per server address.
	servers := 1
	if serve {
		servers = ServersFor(clients, m)
	}
	if perServer := (clients + servers - 1) / servers; m.Ports > 0 && perServer > m.Ports {
		return nil, &FitError{"ports", fmt.Sprintf("%d sessions each hold a connection to the one server address, past the %d local ports this machine gives one destination (net.ipv4.ip_local_port_range): serve the target on several addresses, or shard across machines",
			perServer, m.Ports)}
	}
	if m.CPUs > 0 && procs > m.CPUs {
		warnings = append(warnings, fmt.Sprintf("--procs %d on %d cores: each shard process gets about %s of a core besides the fault proxies and the server, so the load generator will likely starve (the summary says so if it does); fewer clients, an external toxiproxy-server (--toxiproxy) or more machines let fewer processes hold them",
			procs, m.CPUs, share(m.CPUs, procs)))
	}
	if rate := establishRate(w); m.CPUs > 0 && rate > float64(establishedPerCore*m.CPUs) {
		warnings = append(warnings, fmt.Sprintf("the workload asks for %.0f new sessions a second (clients over their ramp), past the about %d a second %d cores establish through the fault proxy (docs/performance.md): a longer ramp lets them start on time",
			rate, establishedPerCore*m.CPUs, m.CPUs))
	}
	return warnings, nil
}

// establishRate is the sessions a second the workload's ramps ask for at most (groups ramp
// together).
func establishRate(w *workloads.Workload) float64 {
	var rate float64
	for _, g := range w.Groups {
		if g.Ramp > 0 {
			rate += float64(g.Clients) / g.Ramp.Seconds()
		} else {
			rate += float64(g.Clients) // all at once: within the first second
		}
	}
	return rate
}

func share(cpus, procs int) string {
	switch q := float64(cpus) / float64(procs); {
	case q >= 0.5:
		return "half"
	case q >= 1.0/3:
		return "a third"
	default:
		return fmt.Sprintf("1/%d", (procs+cpus-1)/cpus)
	}
}

// ServersFor is how many reference server processes a sharded run of clients sessions against
// the built-in target needs on m: each process holds a descriptor for every session's GET
// stream and, in a burst of late calls, up to one more for its POST, so one holds at most
// (descriptors - serverSpareFDs) / 2 sessions. Measured (docs/performance.md): 19,000 sessions
// against one process of 20,000 descriptors refused connections (accept: too many open files)
// in 2 of 3 runs, and the clients' calls timed out behind the accept back-off.
func ServersFor(clients int, m Machine) int {
	if m.Descriptors <= serverSpareFDs {
		return 1
	}
	per := int((m.Descriptors - serverSpareFDs) / 2)
	return max(1, (clients+per-1)/per)
}

// serverSpareFDs are a reference server process's descriptors besides its sessions': its
// listener, its metrics, the runtime's.
const serverSpareFDs = 256
