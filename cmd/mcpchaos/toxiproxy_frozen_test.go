package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
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
	for i := 0; ; i++ { // busy (ETXTBSY) or missing while another job re-installs it: retry
		if err = cmd.Start(); err == nil {
			break
		} else if i == 50 {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		cmd = exec.Command(bin, "-host", "127.0.0.1", "-port", port)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGCONT) // our own child, by its PID
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	api := "http://127.0.0.1:" + port
	// proxies lists the names of the server's proxies; ok is false while it does not answer.
	proxies := func() (names []string, ok bool) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api+"/proxies", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, false
		}
		defer resp.Body.Close()
		var m map[string]any
		b, _ := io.ReadAll(resp.Body)
		if json.Unmarshal(b, &m) != nil {
			return nil, false
		}
		for name := range m {
			names = append(names, name)
		}
		return names, true
	}
	for i := 0; i < 500; i++ {
		if _, ok := proxies(); ok {
			break
		}
		time.Sleep(20 * time.Millisecond) // a bounded poll for the server's readiness
	}
	h := hostile.New(t)
	dir := t.TempDir()
	// Freeze the server once the run has made its group's proxy (an observed event, polled):
	// the last thing the run asks of Toxiproxy before its clock starts, so the freeze falls
	// before the first fault (2.5 s into the run) and after every step of the set-up. Not at
	// the first proxy seen: that can be the scratch proxy the run checks its faults on, and a
	// server frozen then leaves the set-up waiting on the Toxiproxy client's 30 s timeouts
	// (a run interrupted at a minute, seen on a quiet machine).
	frozen := make(chan struct{})
	go func() {
		defer close(frozen)
		for i := 0; i < 3000; i++ {
			names, _ := proxies()
			if slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, "-probe") }) {
				break
			}
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
