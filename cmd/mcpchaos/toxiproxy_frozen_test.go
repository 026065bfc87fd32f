package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults/toxiproxytest"
	"github.com/mcpchaos/mcpchaos/internal/hostile"
)

// If Toxiproxy itself cannot answer (a toxiproxy-server frozen mid-run, SIGSTOP), the run says
// so: the fault it could not apply, that Toxiproxy did not answer, and which connections were
// stalled on their clients (none here: our clients read), and it exits non-zero with an export.
func TestRunSaysToxiproxyDidNotAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of about 10 s")
	}
	bin, err := toxiproxytest.Binary()
	if err != nil {
		t.Skip(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", port)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGCONT) // our own child, by its PID
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	api := "http://127.0.0.1:" + port
	proxies := func() int { // how many proxies the server has; -1 while it does not answer
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api+"/proxies", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		var m map[string]any
		b, _ := io.ReadAll(resp.Body)
		if json.Unmarshal(b, &m) != nil {
			return -1
		}
		return len(m)
	}
	for i := 0; proxies() < 0 && i < 500; i++ {
		time.Sleep(20 * time.Millisecond) // a bounded poll for the server's readiness
	}
	h := hostile.New(t)
	dir := t.TempDir()
	// Freeze the server once the run has made its proxies (an observed event, polled), before
	// the first fault at 1.5 s.
	frozen := make(chan struct{})
	go func() {
		defer close(frozen)
		for i := 0; proxies() < 1 && i < 1000; i++ {
			time.Sleep(10 * time.Millisecond) // a bounded poll for the run's proxies
		}
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}()
	out := runCmd(t, dir, "run", filepath.Join("testdata", "toxiproxy-frozen.yaml"), "--target", h.URL("get-405"), "--toxiproxy", api,
		"--progress", "off", "--out", filepath.Join(dir, "r.json"))
	<-frozen
	_ = syscall.Kill(pid, syscall.SIGCONT)
	for _, want := range []string{"fault cut: abandoned: Toxiproxy did not answer in time", "Toxiproxy itself did not answer"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run does not say %q", want)
		}
	}
	if !strings.Contains(out, "mcpchaos:") {
		t.Errorf("the run ended without an error")
	}
}
