package engine

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/faults/toxiproxytest"
	"github.com/mcpchaos/mcpchaos/internal/loopback"
	"github.com/mcpchaos/mcpchaos/refserver"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Runs against targets given by URL (a TLS server, a stateless server, an external
// toxiproxy-server), judged on the export Run returns.

// writeCA makes a CA and a server certificate for localhost, writes the CA's PEM to dir/ca.pem
// and returns the server's certificate.
func writeCA(t *testing.T, dir string) tls.Certificate {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcpchaos test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

type echoIn struct {
	Text string `json:"text"`
}

// sdkHandler is the official Go SDK's streamable handler with an echo tool.
func sdkHandler(opts *mcp.StreamableHTTPOptions, versions ...string) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk-under-test", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: versions})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)
}

// runFile plans and runs the workload file at path (with opts) and returns Run's export and
// error; a run that returns no export fails the test.
func runFile(t *testing.T, ctx context.Context, path string, opts ...PlanOption) (*results.Export, error) {
	t.Helper()
	return runFileWith(t, ctx, path, opts)
}

// runFileWith is runFile with options for Run as well.
func runFileWith(t *testing.T, ctx context.Context, path string, opts []PlanOption, runOpts ...Option) (*results.Export, error) {
	t.Helper()
	w, err := workloads.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(w, opts...)
	if err != nil {
		t.Fatal(err)
	}
	exp, runErr := Run(ctx, plan, append([]Option{WithStderr(testWriter{t})}, runOpts...)...)
	if exp == nil {
		t.Fatalf("no export; Run returned %v", runErr)
	}
	return exp, runErr
}

// A real server behind TLS, reached by URL through embedded Toxiproxy, with a header carrying a
// secret from the environment, over HTTP/1.1 and HTTP/2: every policy's group runs against it,
// deaths are estimated from the declared TTL and marked so, and the secret is nowhere in the
// export.
func TestRunURLTargetTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	dir := t.TempDir()
	cert := writeCA(t, dir)
	const secret = "s3cret-token"
	t.Setenv("MCPCHAOS_TEST_TOKEN", secret)
	// Calls for 2 s before and 3 s after: on a machine at load 20 to 40 the Go SDK group's
	// first calls waited past their 2 s timeout and none was answered in a 1.5 s phase.
	// A TTL of 1.5 s, not 400 ms: on a loaded machine a new session sat idle for longer than
	// 400 ms between its initialize and its first call, died, and no call ever succeeded. The
	// quiet phase outlasts it by 1.5 s: with 0.5 s, a session whose last call of the active
	// phase was answered late was still alive when the calls resumed, and none died.
	sdk := sdkHandler(&mcp.StreamableHTTPOptions{SessionTimeout: 1500 * time.Millisecond, EventStore: mcp.NewMemoryEventStore(nil)})
	protos := make(chan int, 1024)
	addr := loopback.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secret {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		select {
		case protos <- r.ProtoMajor:
		default:
		}
		sdk.ServeHTTP(w, r)
	}), &cert)
	_, port, _ := net.SplitHostPort(addr)
	for _, version := range []string{"1.1", "2"} {
		t.Run("HTTP/"+version, func(t *testing.T) {
			path := filepath.Join(dir, "w"+version+".yaml")
			os.WriteFile(path, fmt.Appendf(nil, `name: tls
target:
  url: https://localhost:%s/mcp
  session_ttl: 1500ms
  headers:
    Authorization: Bearer ${MCPCHAOS_TEST_TOKEN}
  ca_file: ca.pem
  http_version: "%s"
phases:
  - {name: active, duration: 2s, calls: true}
  - {name: quiet, duration: ttl+1500ms, calls: false}
  - {name: after, duration: 3s, calls: true}
groups:
  - {name: naive, clients: 3, policy: naive, call_every: 100ms, retry_backoff: 10ms, request_timeout: 2s}
  - {name: probe, clients: 3, policy: probe, call_every: 100ms, retry_backoff: 10ms, request_timeout: 2s}
  - {name: sdk, clients: 3, policy: gosdk, call_every: 100ms, request_timeout: 2s}
faults:
  - {name: lb, toxic: latency, attributes: {latency: 5}, at: 100ms, for: 300ms}
`, port, version), 0o600)
			for len(protos) > 0 {
				<-protos
			}
			exp, err := runFile(t, context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			r := exp.Run
			if r.Target != "https://localhost:"+port+"/mcp" || !r.DetectionDelayEstimated || r.NegotiatedProtocol != "2025-11-25" || r.Generation != "session" {
				t.Errorf("run: target %q estimated %t protocol %q generation %q", r.Target, r.DetectionDelayEstimated, r.NegotiatedProtocol, r.Generation)
			}
			for _, g := range exp.Groups {
				if g.Counters["tool_calls_ok"] == 0 || g.Counters["sessions_dead"] == 0 {
					t.Errorf("%s: counters %v errors %v", g.Name, g.Counters, g.Errors)
				}
			}
			if g := group(t, exp, "probe"); g.Counters["misattributed_errors"] != 0 || g.Counters["sessions_dead_detected"] == 0 {
				t.Errorf("probe: %v", g.Counters)
			}
			if na := r.NotObservable["sdk"]; !slices.Contains(na, "retries_against_dead") {
				t.Errorf("not_observable = %v", r.NotObservable)
			}
			want := map[string]int{"1.1": 1, "2": 2}[version]
			if got := <-protos; got != want {
				t.Errorf("the server saw HTTP/%d, want HTTP/%d", got, want)
			}
			data, _ := json.Marshal(exp)
			if strings.Contains(string(data), secret) {
				t.Error("the export contains the secret header value")
			}
		})
	}
}

// Against a server that speaks only the stateless revision the export says so, and measures
// what applies: requests lost in flight to a fault, re-issued, and their recovery.
func TestRunStatelessTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	addr := loopback.Serve(t, sdkHandler(&mcp.StreamableHTTPOptions{Stateless: true}, "2026-07-28"), nil)
	path := filepath.Join(t.TempDir(), "w.yaml")
	os.WriteFile(path, fmt.Appendf(nil, `name: stateless
target:
  url: http://%s/mcp
phases:
  - {name: calls, duration: 1500ms, calls: true}
groups:
  - {name: naive, clients: 4, policy: naive, call_every: 50ms, retries: 5, retry_backoff: 100ms, request_timeout: 2s}
faults:
  - {name: slow, toxic: latency, attributes: {latency: 150}, at: 200ms, for: 1s}
  - {name: out, toxic: down, at: 500ms, for: 200ms}
`, addr), 0o600)
	exp, err := runFile(t, context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	r := exp.Run
	if r.Generation != "stateless" || r.NegotiatedProtocol != "2026-07-28" {
		t.Errorf("generation %q protocol %q", r.Generation, r.NegotiatedProtocol)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "the session scenarios do not apply") }) {
		t.Errorf("notes %q do not say the session scenarios do not apply", r.Notes)
	}
	if !slices.Contains(r.NotObservable["naive"], "misattributed_errors") {
		t.Errorf("not_observable = %v", r.NotObservable)
	}
	g := group(t, exp, "naive")
	c := g.Counters
	if c["requests_lost"] == 0 || c["requests_reissued"] == 0 || c["tool_calls_ok"] == 0 || g.Histograms["recovery_latency"].Count == 0 {
		t.Errorf("counters %v errors %v recovery %+v", c, g.Errors, g.Histograms["recovery_latency"])
	}
	if c["drops"] != 0 || c["replays_ok"] != 0 || c["dead_session_requests"] != 0 {
		t.Errorf("session counters against a stateless server: %v", c)
	}
}

// On a real toxiproxy-server a run's proxies are gone after it ends, after an interrupt, and
// when it fails to start; a fault the server does not know is refused before anything runs.
func TestRunExternalToxiproxy(t *testing.T) {
	if testing.Short() {
		t.Skip("timeline test")
	}
	api := toxiproxytest.Start(t)
	inst, err := refserver.Start("127.0.0.1:0", refserver.Config{SessionTTL: 300 * time.Millisecond, Retention: time.Minute, NotifyInterval: 50 * time.Millisecond}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	dir := t.TempDir()
	write := func(name, toxic string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, fmt.Appendf(nil, `name: ext
target:
  url: %s
  session_ttl: 300ms
phases:
  - {name: active, duration: 400ms, calls: true}
  - {name: quiet, duration: ttl+300ms, calls: false}
  - {name: after, duration: 500ms, calls: true}
groups:
  - {name: naive, clients: 3, policy: naive, call_every: 100ms, retry_backoff: 10ms}
  - {name: probe, clients: 3, policy: probe, call_every: 100ms, retry_backoff: 10ms}
faults:
  - {name: cut, toxic: %s, at: 450ms, for: 200ms}
  - {name: out, toxic: down, at: 700ms, for: 300ms}
`, inst.URL, toxic), 0o600)
		return p
	}
	leftovers := func() []string {
		all, err := toxiproxy.NewClient(api).Proxies()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for n := range all {
			out = append(out, n)
		}
		return out
	}

	t.Run("a whole run", func(t *testing.T) {
		exp, err := runFile(t, context.Background(), write("w.yaml", "reset_peer"), WithToxiproxy(api))
		if err != nil {
			t.Fatal(err)
		}
		if len(exp.Faults) != 4 || exp.Run.Error != "" {
			t.Errorf("faults %+v error %q", exp.Faults, exp.Run.Error)
		}
		if !slices.ContainsFunc(exp.Run.Notes, func(n string) bool { return strings.Contains(n, "mcpchaos faults clean --toxiproxy "+api) }) {
			t.Errorf("notes %q", exp.Run.Notes)
		}
		if g := group(t, exp, "probe"); g.Counters["sessions_started"] == 0 || g.Counters["tool_calls_ok"] == 0 {
			t.Errorf("probe: %v %v", g.Counters, g.Errors)
		}
		// The server timed by the kernel's clock on the relay between the toxiproxy-server on
		// loopback and the server: every answered call is an exchange (a few may be left out).
		if g := group(t, exp, "probe"); runtime.GOOS == "linux" && g.Histograms["server_latency"].Count < g.Counters["tool_calls_ok"]/2 {
			t.Errorf("probe: server_latency holds %d samples for %d answered calls", g.Histograms["server_latency"].Count, g.Counters["tool_calls_ok"])
		}
		if l := leftovers(); len(l) != 0 {
			t.Errorf("left on the toxiproxy-server: %v", l)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Interrupted once every group has had a call answered: mid-run however long set-up
		// took on a loaded machine (a timer of 600 ms could fire during set-up).
		intr := &interruptWhen{cond: callsOK, cancel: cancel}
		exp, err := runFileWith(t, ctx, write("w.yaml", "reset_peer"), []PlanOption{WithToxiproxy(api)}, WithObserver(intr))
		if !errors.Is(err, ErrInterrupted) || !exp.Run.Interrupted {
			t.Fatalf("run returned %v, interrupted %t", err, exp.Run.Interrupted)
		}
		if l := leftovers(); len(l) != 0 {
			t.Errorf("left on the toxiproxy-server after an interrupt: %v", l)
		}
	})
	t.Run("a toxic the server does not know", func(t *testing.T) {
		path := write("idle.yaml", "idle_timeout")
		os.WriteFile(path, []byte(strings.Replace(mustRead(t, path), "toxic: idle_timeout,", "toxic: idle_timeout, attributes: {timeout: 50},", 1)), 0o600)
		w, err := workloads.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := Run(context.Background(), mustPlan(t, w, WithToxiproxy(api)), WithStderr(testWriter{t}))
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(fmt.Sprint(err), "idle.yaml:13:24: fault cut: the toxiproxy-server at "+api+" refuses it") ||
			!strings.Contains(fmt.Sprint(err), "idle_timeout is mcpchaos's own toxic") {
			t.Errorf("err = %T %v, want a ConfigError naming the fault", err, err)
		}
		if exp != nil {
			t.Error("an export for a run that never started")
		}
		if l := leftovers(); len(l) != 0 {
			t.Errorf("left on the toxiproxy-server: %v", l)
		}
	})
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
