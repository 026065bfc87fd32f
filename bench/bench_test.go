package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mcpchaos/mcpchaos/refserver"
)

// childEnv makes the test binary one of the benchmark's child processes.
const childEnv = "MCPCHAOS_BENCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		if err := Child(context.Background(), spec, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// lockedBuffer collects what the child processes say on stderr (two may write at once).
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// launchSelf runs this test binary as a child process; what it says on stderr goes to buf.
func launchSelf(buf *lockedBuffer) Launch {
	return func(ctx context.Context, spec string) *exec.Cmd {
		c := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), childEnv+"="+spec)
		c.Stderr = buf
		return c
	}
}

func startServer(t *testing.T) *refserver.Instance {
	t.Helper()
	inst, err := refserver.Start("127.0.0.1:0", refserver.Config{}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	return inst
}

// The promises the Performance section makes, held small: every session established, every
// call answered, about one goroutine per held session for this tool's client and fewer than
// the Go SDK client's, the proxy in the path in a process of its own, and figures read from
// /proc that an independent reading of /proc during the hold confirms.
func TestMeasureHoldsSessionsCheaply(t *testing.T) {
	if testing.Short() {
		t.Skip("holds sessions in child processes")
	}
	inst := startServer(t)
	got := map[string]*Result{}
	for _, kind := range []string{Lean, GoSDK} {
		var stderr lockedBuffer
		var outside int64 // VmRSS, read independently while the sessions are held
		r, err := Measure(context.Background(), Options{Client: kind, URL: inst.URL, Sessions: 200, Rounds: 1, Probes: 20, Workers: 4},
			launchSelf(&stderr), func(pid int, _ *Result) error {
				status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
				if err == nil {
					outside, err = kbField(status, "VmRSS:")
				}
				return err
			})
		if err != nil {
			t.Fatalf("%s: %v\n%s", kind, err, stderr.String())
		}
		got[kind] = r
		t.Logf("%s: %+v", kind, *r)
		if r.Calls != 200 || r.CallErrors != 0 {
			t.Errorf("%s: %d calls, %d errors; want 200 and 0", kind, r.Calls, r.CallErrors)
		}
		if r.ProbeP50US <= 0 || r.BareP50US <= 0 || r.Protocol != "2025-11-25" {
			t.Errorf("%s: probe %d µs, bare %d µs, protocol %q", kind, r.ProbeP50US, r.BareP50US, r.Protocol)
		}
		if r.ProxyGoroutines < 200 || r.ProxyFDs < 200 {
			t.Errorf("%s: Toxiproxy grew by %d goroutines and %d descriptors for 200 proxied sessions; is the proxy in the path?",
				kind, r.ProxyGoroutines, r.ProxyFDs)
		}
		if r.FDs < 200 || r.RSSBytes <= 0 || r.PSSBytes <= 0 {
			t.Errorf("%s: held 200 sessions with %d more descriptors and %d bytes more RSS, %d PSS", kind, r.FDs, r.RSSBytes, r.PSSBytes)
		}
		// Connections are reused: a session dials its stream's own, and the POSTs share a pool
		// that at most Workers establishments at once never overflow.
		if r.EstablishDials < 200 || r.EstablishDials > 200+3*4 {
			t.Errorf("%s: %d connections dialed to establish 200 sessions with 4 workers, want 200 to 212", kind, r.EstablishDials)
		}
		// The process stood still while both were read: smaps_rollup's Rss and status's VmRSS
		// count the same pages (status's counters may lag by a few pages per thread).
		if d := outside - r.HeldRSSBytes; d < -r.HeldRSSBytes/50 || d > r.HeldRSSBytes/50 {
			t.Errorf("%s: RSS at the hold %d bytes, an outside reading %d: the process moved while it was read", kind, r.HeldRSSBytes, outside)
		}
	}
	lean, sdk := got[Lean], got[GoSDK]
	if g := lean.GoroutinesPerSession(); g > 1.5 {
		t.Errorf("mcpchaos client: %.2f goroutines per held session, want about 1", g)
	}
	if lean.GoroutinesPerSession() >= sdk.GoroutinesPerSession() {
		t.Errorf("goroutines per session: mcpchaos %.2f, Go SDK %.2f", lean.GoroutinesPerSession(), sdk.GoroutinesPerSession())
	}
}

// More sessions than one proxy process carries are spread over several, by dial: each carries
// connections (Measure checks it), their figures are summed, and every call is answered.
func TestMeasureSpreadsOverProxies(t *testing.T) {
	if testing.Short() {
		t.Skip("holds sessions in child processes")
	}
	inst := startServer(t)
	var stderr lockedBuffer
	r, err := Measure(context.Background(), Options{Client: Lean, URL: inst.URL, Sessions: 60, Rounds: 1, Workers: 4, SessionsPerProxy: 25},
		launchSelf(&stderr), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	// Two sockets a session in whichever process carries it: only the sum over the three holds
	// them all.
	if r.ProxyProcesses != 3 || r.Calls != 60 || r.CallErrors != 0 || r.ProxyFDs < 2*60 {
		t.Errorf("%d proxy processes, %d calls, %d errors, %d proxy descriptors; want 3, 60, 0, at least 120",
			r.ProxyProcesses, r.Calls, r.CallErrors, r.ProxyFDs)
	}
}

// A target off loopback is refused before any process starts; a measuring process that fails
// fails the measurement with its reason.
func TestMeasureRefusesNonLoopback(t *testing.T) {
	var stderr lockedBuffer
	_, err := Measure(context.Background(), Options{Client: Lean, URL: "http://192.0.2.1/mcp", Sessions: 1, NoProxy: true},
		launchSelf(&stderr), nil)
	if err == nil || !strings.Contains(err.Error(), "loopback targets only") {
		t.Fatalf("a non-loopback target: %v", err)
	}
	if stderr.String() != "" {
		t.Errorf("a process was started for it: %q", stderr.String())
	}
}

func TestMeasureReportsAFailingProcess(t *testing.T) {
	var stderr lockedBuffer
	// Nothing listens on port 1: establishing fails in the measuring process.
	_, err := Measure(context.Background(), Options{Client: GoSDK, URL: "http://127.0.0.1:1/mcp", Sessions: 1, NoProxy: true},
		launchSelf(&stderr), nil)
	if err == nil || !strings.Contains(err.Error(), "waiting for phase holding") {
		t.Fatalf("a measuring process that cannot connect: %v", err)
	}
	if !strings.Contains(stderr.String(), "connect") {
		t.Errorf("the measuring process said %q, want its reason", stderr.String())
	}
}

func TestHoldRefusesNonLoopback(t *testing.T) {
	err := Hold(context.Background(), Options{Client: Lean, URL: "http://192.0.2.1/mcp", Sessions: 1}, strings.NewReader(""), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("a non-loopback target: %v", err)
	}
}

func TestCPUTime(t *testing.T) {
	// A command name with a space and a parenthesis, as /proc/PID/stat may hold.
	stat := []byte("4242 (mcp chaos) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 125 0 0 20 0 9 0 100 0 0\n")
	got, err := cpuTime(stat)
	if err != nil || got.Milliseconds() != 3750 {
		t.Fatalf("cpuTime = %v, %v; want 3.75s (375 ticks)", got, err)
	}
	if _, err := cpuTime([]byte("4242 (x) S 1")); err == nil {
		t.Fatal("a short stat line was accepted")
	}
}
