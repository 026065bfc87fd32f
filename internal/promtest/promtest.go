// Package promtest starts a real Prometheus server for tests, on a free loopback port with its own
// temporary TSDB, and stops it by its PID when the test ends, as net/http/httptest starts HTTP
// servers.
//
// prometheus comes from Debian's prometheus package (2.42; .ci/run installs it). Where it is
// missing, Start skips the test saying how to get it, except under CI=true, where a missing
// component is a failure. The server scrapes only the loopback targets it is given and listens
// only on 127.0.0.1; it never touches the system service's configuration or data.
package promtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/loopback"
	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
)

// Options say what the server scrapes and what it accepts.
type Options struct {
	// Targets are host:port addresses (loopback) scraped at MetricsPath every ScrapeInterval,
	// as job "mcpchaos". More can be set later with SetTargets.
	Targets []string
	// MetricsPath defaults to /metrics.
	MetricsPath string
	// ScrapeInterval defaults to 1s (the smallest sensible for a test).
	ScrapeInterval time.Duration
	// HonorLabels keeps the scraped series' own job/instance labels.
	HonorLabels bool
	// RemoteWriteReceiver enables /api/v1/write (--web.enable-remote-write-receiver).
	RemoteWriteReceiver bool
}

// Server is a running Prometheus.
type Server struct {
	// URL is the server's base URL (http://127.0.0.1:PORT), for queries and remote write
	// (URL + "/api/v1/write").
	URL string
	// PID is the process's id (ours; stopped by it).
	PID int

	targetsFile string
	stop        func()
}

// Start runs prometheus on 127.0.0.1 and returns it once /-/ready answers 200; it is stopped when
// t ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("prometheus is not installed, and CI must run the Prometheus tests: .ci/run installs Debian's prometheus")
		}
		t.Skip("prometheus is not installed: the Prometheus tests need it (apt-get install prometheus)")
	}
	if opts.MetricsPath == "" {
		opts.MetricsPath = "/metrics"
	}
	if opts.ScrapeInterval <= 0 {
		opts.ScrapeInterval = time.Second
	}
	dir := t.TempDir()
	s := &Server{targetsFile: filepath.Join(dir, "targets.json")}
	if err := s.writeTargets(opts.Targets); err != nil {
		t.Fatalf("promtest: %v", err)
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config(opts, s.targetsFile)), 0o600); err != nil {
		t.Fatalf("promtest: writing the config: %v", err)
	}
	var last string
	for range 3 { // a freed port can be taken by someone else before prometheus binds it
		out, ok := s.try(t, bin, cfg, dir, opts)
		if ok {
			return s
		}
		last = out
	}
	t.Fatalf("prometheus did not start:\n%s", last)
	return nil
}

func config(opts Options, targetsFile string) string {
	// file_sd so that SetTargets can add targets known only after the server started (a run's
	// --metrics-addr); Prometheus watches the file.
	return fmt.Sprintf(`global:
  scrape_interval: %s
  scrape_timeout: %s
  evaluation_interval: %s
scrape_configs:
  - job_name: mcpchaos
    metrics_path: %q
    honor_labels: %t
    file_sd_configs:
      - files: [%q]
        refresh_interval: 1s
`, dur(opts.ScrapeInterval), dur(opts.ScrapeInterval), dur(opts.ScrapeInterval), opts.MetricsPath, opts.HonorLabels, targetsFile)
}

func dur(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// SetTargets replaces the scraped targets (host:port). Prometheus picks the change up within
// about a second; wait for a series with WaitFor.
func (s *Server) SetTargets(t testing.TB, targets ...string) {
	t.Helper()
	if err := s.writeTargets(targets); err != nil {
		t.Fatalf("promtest: %v", err)
	}
}

func (s *Server) writeTargets(targets []string) error {
	if targets == nil {
		targets = []string{}
	}
	b, err := json.Marshal([]map[string]any{{"targets": targets}})
	if err != nil {
		return err
	}
	tmp := s.targetsFile + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing the scrape targets: %w", err)
	}
	return os.Rename(tmp, s.targetsFile) // atomic: the watcher never reads half a file
}

func (s *Server) try(t testing.TB, bin, cfg, dir string, opts Options) (string, bool) {
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatalf("finding a free loopback port: %v", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := []string{"--config.file=" + cfg, "--web.listen-address=" + addr,
		"--storage.tsdb.path=" + filepath.Join(dir, "tsdb-"+strconv.Itoa(port)), "--log.level=warn"}
	if opts.RemoteWriteReceiver {
		args = append(args, "--web.enable-remote-write-receiver")
	}
	out := &syncbuf.Buffer{}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM) // ours, by PID
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
	}
	s.URL = "http://" + addr
	deadline := time.Now().Add(30 * time.Second) // a busy 2-core machine starts it slowly
	for {
		if ready(s.URL) {
			s.PID, s.stop = cmd.Process.Pid, stop
			t.Cleanup(stop)
			return "", true
		}
		select {
		case <-exited:
			return out.String(), false
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return out.String() + "\n(not ready within 30s)", false
		}
		time.Sleep(50 * time.Millisecond) // polling for readiness, not synchronising a result
	}
}

// Stop stops the server now (it is also stopped when the test ends).
func (s *Server) Stop() {
	if s.stop != nil {
		s.stop()
	}
}

func ready(base string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(base + "/-/ready")
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Sample is one series of an instant query's vector result.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Query runs an instant query and returns its vector (a scalar result is one sample without
// labels).
func (s *Server) Query(ctx context.Context, q string) ([]Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/query?query="+url.QueryEscape(q), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %q: %d %s", q, resp.StatusCode, bytes.TrimSpace(body))
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %q: %s", q, r.Error)
	}
	return decode(r.Data.ResultType, r.Data.Result)
}

func decode(kind string, raw json.RawMessage) ([]Sample, error) {
	switch kind {
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		f, err := number(v[1])
		return []Sample{{Value: f}}, err
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(raw, &vec); err != nil {
			return nil, err
		}
		out := make([]Sample, 0, len(vec))
		for _, e := range vec {
			f, err := number(e.Value[1])
			if err != nil {
				return nil, err
			}
			out = append(out, Sample{Labels: e.Metric, Value: f})
		}
		return out, nil
	}
	return nil, fmt.Errorf("result type %q is not an instant vector or scalar", kind)
}

func number(v any) (float64, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("sample value %v is not a string", v)
	}
	return strconv.ParseFloat(s, 64)
}

// WaitFor polls the instant query q until it returns at least one sample, and returns them; it
// fails the test after timeout, saying what the query last answered.
func (s *Server) WaitFor(t testing.TB, q string, timeout time.Duration) []Sample {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := s.Query(ctx, q)
		cancel()
		if err == nil && len(got) > 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("promtest: %q returned no data within %s (last error: %v; targets: %s)", q, timeout, err, s.targetsSummary())
			return nil
		}
		time.Sleep(200 * time.Millisecond) // polling Prometheus's scrapes, not synchronising a result
	}
}

func (s *Server) targetsSummary() string {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(s.URL + "/api/v1/targets")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return strings.TrimSpace(string(b))
}
