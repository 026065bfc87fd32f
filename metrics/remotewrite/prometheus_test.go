package remotewrite_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startPrometheus runs Debian's prometheus on a free loopback port with the remote write
// receiver on and its TSDB in a temp dir, and stops it by PID when t ends. It returns the
// server's base URL. Outside CI a missing prometheus skips the test; under CI=true it fails.
// (A minimal copy of what internal/promtest offers where it exists.)
func startPrometheus(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prometheus is not installed, and CI must run the remote write tests: .ci/run installs Debian's prometheus")
		}
		t.Skip("prometheus is not installed: the remote write tests need it (apt-get install prometheus)")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var last string
	for range 3 { // a freed port can be taken by someone else before prometheus binds it
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		out := &syncBuffer{}
		cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
			"--web.listen-address="+addr, "--web.enable-remote-write-receiver", "--log.level=warn")
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting prometheus: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() {
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM) // ours, by PID
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		base := "http://" + addr
		deadline := time.Now().Add(30 * time.Second)
		for {
			resp, err := http.Get(base + "/-/ready")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					t.Cleanup(stop)
					return base
				}
			}
			select {
			case <-exited:
			default:
				if time.Now().Before(deadline) {
					time.Sleep(50 * time.Millisecond) // polling for readiness, not synchronising a result
					continue
				}
				stop()
			}
			break
		}
		last = out.String()
	}
	t.Fatalf("prometheus did not start:\n%s", last)
	return ""
}

// promSample is one series of an instant query's answer.
type promSample struct {
	Metric map[string]string
	Value  float64
}

// query runs an instant PromQL query and returns its vector (a scalar as one sample).
func query(t testing.TB, base, q string) []promSample {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status, Error string
		Data          struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %s: %v %s %s", q, err, body.Status, body.Error)
	}
	var out []promSample
	parse := func(v []any) float64 {
		f, _ := strconv.ParseFloat(fmt.Sprint(v[1]), 64)
		return f
	}
	switch body.Data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string
			Value  []any
		}
		if err := json.Unmarshal(body.Data.Result, &vec); err != nil {
			t.Fatal(err)
		}
		for _, s := range vec {
			out = append(out, promSample{s.Metric, parse(s.Value)})
		}
	case "scalar":
		var v []any
		if err := json.Unmarshal(body.Data.Result, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, promSample{nil, parse(v)})
	default:
		t.Fatalf("query %s: a %s, not an instant vector", q, body.Data.ResultType)
	}
	return out
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
