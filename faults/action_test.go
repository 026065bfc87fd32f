package faults

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func since() func() time.Duration {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }
}

// An exec action records its output and exit status; secrets are cut out of the output.
func TestExecRecordsOutputAndStatus(t *testing.T) {
	e := Exec{
		Command: "sh", Args: []string{"-c", `echo "deploying with $DEPLOY_TOKEN"; echo warn >&2; exit 0`},
		Env:    []string{"DEPLOY_TOKEN=tok-0123456789"},
		Redact: func(b []byte) []byte { return []byte(strings.ReplaceAll(string(b), "tok-0123456789", "[redacted]")) },
	}
	out := e.Do(context.Background(), Env{Since: since()})
	if out.Err != nil || out.ExitStatus == nil || *out.ExitStatus != 0 {
		t.Fatalf("outcome %+v", out)
	}
	if !strings.Contains(out.Output, "deploying with [redacted]") || !strings.Contains(out.Output, "warn") || strings.Contains(out.Output, "tok-0123") {
		t.Errorf("output %q", out.Output)
	}
	if len(out.Command) != 3 || out.Command[0] != "sh" || len(out.Steps) != 1 || out.Steps[0].Target != "exec" {
		t.Errorf("command %v steps %v", out.Command, out.Steps)
	}
}

// A failing command is a failure with its status; its output is still kept, bounded.
func TestExecFailureAndBoundedOutput(t *testing.T) {
	e := Exec{Command: "sh", Args: []string{"-c", "head -c 5000 /dev/zero | tr '\\0' x; exit 3"}, MaxOutput: 100}
	out := e.Do(context.Background(), Env{})
	if out.Err == nil || !strings.Contains(out.Err.Error(), "exited with status 3") || out.ExitStatus == nil || *out.ExitStatus != 3 {
		t.Fatalf("outcome %+v", out)
	}
	if len(out.Output) != 100 || !out.Truncated {
		t.Errorf("kept %d bytes, truncated %v; want 100, true", len(out.Output), out.Truncated)
	}
	missing := Exec{Command: filepath.Join(t.TempDir(), "no-such-deploy")}.Do(context.Background(), Env{})
	if missing.Err == nil || missing.ExitStatus != nil {
		t.Errorf("a missing command: %+v", missing)
	}
}

// On timeout the command's whole process group is killed, a child it started included, and
// the action returns long before the command would have ended.
func TestExecTimeoutKillsItsProcessGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "child.pid")
	e := Exec{Command: "sh", Args: []string{"-c", "sleep 60 & echo $! > " + pidfile + "; wait"}, Timeout: 300 * time.Millisecond}
	began := time.Now()
	out := e.Do(context.Background(), Env{})
	if took := time.Since(began); took > 20*time.Second {
		t.Fatalf("took %s", took)
	}
	if out.Err == nil || !strings.Contains(out.Err.Error(), "did not finish within 300ms; its process group was killed") {
		t.Fatalf("outcome %+v", out)
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the command's child %d outlived the timeout", pid)
		}
		time.Sleep(10 * time.Millisecond) // waiting for the kernel to reap it, bounded
	}
}

// alive says whether pid is a running process (a zombie awaiting its reaper is not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// wait_for polls a URL until it answers 2xx; a command until it exits 0; and fails, saying
// what it last saw, when the target is not ready in time.
func TestWaitFor(t *testing.T) {
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) < 3 {
			http.Error(w, "starting", http.StatusServiceUnavailable)
		}
	}))
	defer ts.Close()
	out := WaitFor{URL: ts.URL, Timeout: 10 * time.Second, Interval: 5 * time.Millisecond}.Do(context.Background(), Env{})
	if out.Err != nil || hits.Load() != 3 || !strings.Contains(out.Detail, "ready after") || !strings.Contains(out.Detail, "(3 attempts)") {
		t.Errorf("outcome %+v after %d requests", out, hits.Load())
	}
	never := WaitFor{URL: ts.URL + "/x", Timeout: 300 * time.Millisecond, Interval: 20 * time.Millisecond}
	hits.Store(-1000) // 503 from now on
	out = never.Do(context.Background(), Env{})
	if out.Err == nil || !strings.Contains(out.Err.Error(), "not ready within 300ms") || hits.Load() == -1000 {
		t.Errorf("never ready: %+v after %d requests", out, hits.Load()+1000)
	}
	dir := t.TempDir()
	flag := filepath.Join(dir, "ready")
	cmd := WaitFor{Command: []string{"sh", "-c", "test -e " + flag + " || { touch " + flag + "; exit 1; }"}, Timeout: 10 * time.Second, Interval: time.Millisecond}
	if out := cmd.Do(context.Background(), Env{}); out.Err != nil || !strings.Contains(out.Detail, "(2 attempts)") {
		t.Errorf("command: %+v", out)
	}
}

// fakeTopology records what the topology actions ask for.
type fakeTopology struct {
	mu    sync.Mutex
	slots []int
	calls []string
}

func (f *fakeTopology) Slots() []int { return f.slots }
func (f *fakeTopology) RestartAs(slot int, fault string, grace time.Duration, era string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if slot >= len(f.slots) {
		return errors.New("no such replica")
	}
	f.calls = append(f.calls, strings.TrimSpace("restart "+strconv.Itoa(slot)+" "+fault+" "+grace.String()+" "+era))
	return nil
}
func (f *fakeTopology) Rebalance(fault string) { f.calls = append(f.calls, "rebalance "+fault) }
func (f *fakeTopology) Scale(n int, fault string) error {
	f.calls = append(f.calls, "scale "+strconv.Itoa(n)+" "+fault)
	return nil
}

// Actions run in the order of their offsets, one after another; a rolling restart goes
// through every replica with its delay; the first failure is returned, and every action is
// reported.
func TestRunActions(t *testing.T) {
	topo := &fakeTopology{slots: []int{0, 1, 2}}
	var reports []Report
	err := RunActions(context.Background(), Env{Topology: topo}, time.Now(), []ScheduledAction{
		{Name: "bad", At: 30 * time.Millisecond, Action: Restart{Name: "bad", Replica: 7}},
		{Name: "deploy", At: 0, Action: Restart{Name: "deploy", Replica: AllReplicas, Delay: 10 * time.Millisecond, Grace: time.Second}},
		{Name: "lb", At: 20 * time.Millisecond, Action: Rebalance{Name: "lb"}},
		{Name: "down", At: 25 * time.Millisecond, Action: Scale{Name: "down", Replicas: 1}},
	}, func(r Report) { reports = append(reports, r) })
	want := []string{"restart 0 deploy 1s", "restart 1 deploy 1s", "restart 2 deploy 1s", "rebalance lb", "scale 1 down"}
	if strings.Join(topo.calls, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", topo.calls, want)
	}
	if err == nil || !strings.Contains(err.Error(), "restart bad") {
		t.Errorf("error %v", err)
	}
	if len(reports) != 4 || reports[0].Name != "deploy" || len(reports[0].Steps) != 3 || reports[0].Steps[2].Target != "replica-2" ||
		reports[0].Steps[1].At-reports[0].Steps[0].At < 10*time.Millisecond || reports[3].Err == nil {
		t.Errorf("reports %+v", reports)
	}
	// Against a URL target there is no topology: the action fails, saying what to use.
	if out := (Rebalance{Name: "x"}).Do(context.Background(), Env{}); out.Err == nil || !strings.Contains(out.Err.Error(), "exec") {
		t.Errorf("rebalance without a topology: %+v", out)
	}
}

// The run's end stops the schedule: actions not yet due do not run.
func TestRunActionsStopsWithTheRun(t *testing.T) {
	topo := &fakeTopology{slots: []int{0}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := RunActions(ctx, Env{Topology: topo}, time.Now(), []ScheduledAction{{Name: "later", At: time.Hour, Action: Rebalance{Name: "later"}}}, nil)
	if err != nil || len(topo.calls) != 0 {
		t.Errorf("err %v, calls %v", err, topo.calls)
	}
}
