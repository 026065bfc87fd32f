// Package toxiproxytest starts a real toxiproxy-server on loopback for tests, as net/http/httptest
// starts HTTP servers.
//
// The binary comes from `go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0` (which
// names it `server`, in $(go env GOPATH)/bin) or is a `toxiproxy-server` on PATH. .ci/run installs
// it; where it is missing, tests that need it are skipped with a message saying how to get it.
package toxiproxytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Binary finds the toxiproxy-server binary, or says how to install it.
//
// Another job on the machine may be re-installing it (`go install` of .ci/run removes the
// binary, then writes the new one: a 16 MB copy that takes seconds on a loaded machine, during
// which the file is missing, partial, or busy to exec). So a binary that is there but does not
// answer -version is waited for (30 s at most), and a missing one is looked for again for a
// moment, before Binary says there is none.
func Binary() (string, error) {
	missingUntil, presentUntil := time.Now().Add(2*time.Second), time.Now().Add(30*time.Second)
	for {
		path, present := find()
		if path != "" {
			return path, nil
		}
		now := time.Now()
		if now.After(presentUntil) || !present && now.After(missingUntil) {
			return "", errors.New("no toxiproxy-server binary; install it with: go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0")
		}
		time.Sleep(100 * time.Millisecond) // a bounded poll for a re-install to finish
	}
}

// find returns the first candidate binary that says it is toxiproxy-server, or "" and whether
// a candidate file exists at all.
func find() (path string, present bool) {
	var candidates []string
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		candidates = append(candidates, filepath.Join(gobin, "server"))
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
			candidates = append(candidates, filepath.Join(dir, "bin", "server"))
		}
	}
	if p, err := exec.LookPath("toxiproxy-server"); err == nil {
		candidates = append(candidates, p)
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			present = true
		}
		// `server` is a common name: make sure this one is Toxiproxy's.
		out, err := exec.Command(c, "-version").CombinedOutput()
		if err == nil && bytes.Contains(out, []byte("toxiproxy-server")) {
			return c, true
		}
	}
	return "", present
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Start runs a toxiproxy-server on a free loopback port until the test ends, and returns its
// API URL (http://127.0.0.1:PORT). It skips the test when the binary is missing, unless
// $CI is set, where a missing binary is a failure: CI must test against the real server.
func Start(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() { binPath, binErr = Binary() })
	if binErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must run the toxiproxy-server tests: %v", binErr)
		}
		t.Skipf("skipping: %v", binErr)
	}
	var lastErr error
	for i := range 5 { // a free port can be taken between choosing and binding it: try another
		if i > 0 {
			time.Sleep(time.Duration(i) * 500 * time.Millisecond) // or the binary is being re-installed
		}
		api, err := start(t, binPath)
		if err == nil {
			return api
		}
		lastErr = err
	}
	t.Fatalf("starting toxiproxy-server: %v", lastErr)
	return ""
}

func start(t interface{ Cleanup(func()) }, bin string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", port)
	cmd.Stdout, cmd.Stderr = &syncWriter{w: &logs}, &syncWriter{w: &logs}
	cmd.SysProcAttr = ChildAttr() // ended with this process, even if its clean-up never runs
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill() // our own child, by its PID
		<-exited
	}
	api := "http://127.0.0.1:" + port
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api+"/version", nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			exited <- err
			stop()
			return "", fmt.Errorf("toxiproxy-server exited (%v): %s", err, logs.String())
		case <-time.After(20 * time.Millisecond): // bounded poll for readiness
		}
		if time.Now().After(deadline) {
			stop()
			return "", fmt.Errorf("toxiproxy-server on port %s not ready after 10s", port)
		}
	}
	t.Cleanup(stop)
	return api, nil
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w.Len() > 1<<20 {
		return len(p), nil // enough to explain a failure
	}
	return s.w.Write(p)
}

// StartServer runs a toxiproxy-server on a free loopback port, for callers that are not tests
// (testscript commands): stop ends it (by its PID).
func StartServer() (api string, stop func(), err error) {
	binOnce.Do(func() { binPath, binErr = Binary() })
	if binErr != nil {
		return "", nil, binErr
	}
	for i := range 5 {
		if i > 0 {
			time.Sleep(time.Duration(i) * 500 * time.Millisecond) // or the binary is being re-installed
		}
		var stops []func()
		api, err = start(cleanupFunc(func(f func()) { stops = append(stops, f) }), binPath)
		if err == nil {
			return api, func() {
				for _, f := range stops {
					f()
				}
			}, nil
		}
	}
	return "", nil, err
}

// cleanupFunc is the part of testing.TB that start uses.
type cleanupFunc func(func())

func (c cleanupFunc) Cleanup(f func()) { c(f) }
