package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults/toxiproxytest"
	"github.com/mcpchaos/mcpchaos/internal/hostile"
)

// If Toxiproxy cannot answer while a connection of the run's proxy is stalled, the run says
// that Toxiproxy did not answer and names the stalled connection (its address, its proxy and
// why it was cut), end to end (issue 20). The stall is a server that never reads an upload:
// the test sends one straight to the relay between the toxiproxy-server and the server (the
// proxy's upstream, as the server's API shows it) until the relay holds it back, then freezes
// the toxiproxy-server (SIGSTOP) before the run's first fault, which makes the relay cut the
// server.
func TestRunNamesTheStalledConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of about 10 s")
	}
	api, pid := frozenToxiproxy(t)
	h := hostile.New(t)
	dir := t.TempDir()
	frozen := make(chan error, 1)
	go func() { frozen <- stallThenFreeze(api, pid) }()
	out := runCmd(t, dir, "run", filepath.Join("testdata", "toxiproxy-frozen.yaml"), "--target", h.URL("get-405"), "--toxiproxy", api,
		"--progress", "off", "--out", filepath.Join(dir, "r.json"))
	if err := <-frozen; err != nil {
		t.Fatalf("the test could not stall a connection and freeze Toxiproxy: %v", err)
	}
	_ = syscall.Kill(pid, syscall.SIGCONT)
	for _, want := range []string{"fault cut: abandoned: Toxiproxy did not answer in time", "stalled connections: 127.0.0.1:", "'s server, cut: it left"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run does not say %q", want)
		}
	}
	if !strings.Contains(out, "mcpchaos:") {
		t.Errorf("the run ended without an error")
	}
}

// frozenToxiproxy starts a toxiproxy-server on loopback for the test (continued and killed,
// by its PID, when the test ends) and returns its API's URL and its PID.
func frozenToxiproxy(t *testing.T) (string, int) {
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
	// The kernel kills it (SIGKILL) if this process dies before the clean-up below: a test
	// binary killed at its timeout, or its process group sent SIGTERM while the server is
	// frozen, left it behind stopped, with init as its parent.
	var cmd *exec.Cmd
	for i := 0; ; i++ { // busy (ETXTBSY) or missing while another job re-installs it: retry
		cmd = exec.Command(bin, "-host", "127.0.0.1", "-port", port)
		cmd.SysProcAttr = toxiproxytest.ChildAttr()
		if err = cmd.Start(); err == nil {
			break
		} else if i == 50 {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGCONT) // our own child, by its PID
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	api := "http://127.0.0.1:" + port
	for i := 0; i < 500; i++ {
		if _, err := toxiproxyProxies(api); err == nil {
			return api, pid
		}
		time.Sleep(20 * time.Millisecond) // a bounded poll for the server's readiness
	}
	t.Fatalf("the toxiproxy-server on %s never answered", api)
	return "", 0
}

// toxiproxyProxies is the listen address and upstream of each proxy on the server at api.
func toxiproxyProxies(api string) (map[string]proxyAddrs, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api+"/proxies", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var m map[string]proxyAddrs
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// proxyAddrs is what toxiproxyProxies gives of a proxy.
type proxyAddrs struct{ Listen, Upstream string }

// groupProxy waits (bounded) for the run's group proxy (named *-probe) and returns its upstream.
// The run makes it last of all it asks Toxiproxy before its clock starts, so a server frozen
// once it exists is frozen before the first fault and after every step of the set-up. Not the
// first proxy seen: that can be the scratch proxy the run checks its faults on, and a server
// frozen then leaves the set-up waiting on the Toxiproxy client's 30 s timeouts.
func groupProxy(api string) (proxyAddrs, error) {
	for i := 0; i < 3000; i++ {
		ps, _ := toxiproxyProxies(api)
		for name, p := range ps {
			if strings.HasSuffix(name, "-probe") {
				return p, nil
			}
		}
		time.Sleep(10 * time.Millisecond) // a bounded poll for the run's proxies
	}
	return proxyAddrs{}, fmt.Errorf("no group proxy appeared on %s", api)
}

// stallThenFreeze waits for the run's group proxy, uploads to its upstream (the relay in front
// of the server) a body the server never reads, until the relay holds it back (the upload stops
// moving: the relay passes the server's pace on between Toxiproxy's calls), then freezes the
// toxiproxy-server. The run's first fault makes the relay read at once and cut the server, and
// the call to the frozen server is abandoned.
func stallThenFreeze(api string, pid int) error {
	p, err := groupProxy(api)
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", p.Upstream, 5*time.Second)
	if err != nil {
		return err
	}
	_ = c.SetDeadline(time.Now().Add(20 * time.Second)) // a bound on the whole upload
	const size = 32 << 20                               // past the relay's queue and the kernel's buffers
	var sent atomic.Int64
	go func() {
		defer c.Close()
		fmt.Fprintf(c, "POST /never-answered HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
		_, _ = io.Copy(countingWriter{c, &sent}, io.LimitReader(neverJSON{}, size))
	}()
	last, still := int64(-1), 0
	for i := 0; i < 400 && still < 6; i++ { // a bounded poll: 300 ms without progress is held back
		time.Sleep(50 * time.Millisecond)
		if n := sent.Load(); n == last && n > 0 {
			still++
		} else {
			last, still = n, 0
		}
	}
	if still < 6 {
		return fmt.Errorf("the upload was never held back (%d bytes sent)", sent.Load())
	}
	return syscall.Kill(pid, syscall.SIGSTOP)
}

// countingWriter counts what it writes to w.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (cw countingWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.n.Add(int64(n))
	return n, err
}

// neverJSON is an endless body of bytes that are not JSON.
type neverJSON struct{}

func (neverJSON) Read(p []byte) (int, error) {
	copy(p, bytes.Repeat([]byte("x"), len(p)))
	return len(p), nil
}
