package refserver

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startInstance starts an Instance for cfg on loopback; it ends with the test.
func startInstance(t *testing.T, cfg Config) *Instance {
	t.Helper()
	inst, err := Start("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	return inst
}

// scrape reads the instance's /metrics as a Prometheus scraper does: sample name (with its
// labels) → value.
func scrape(t *testing.T, inst *Instance) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + inst.Addr + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", MetricsPath, resp.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// want checks the named samples (prefix added) of a scrape.
func want(t *testing.T, got map[string]float64, samples map[string]float64) {
	t.Helper()
	for name, v := range samples {
		if g, ok := got[MetricsPrefix+name]; !ok || g != v {
			t.Errorf("%s%s = %v (exposed: %v); want %v", MetricsPrefix, name, g, ok, v)
		}
	}
}

// churn opens three sessions, DELETEs one, lets the other two outlive the TTL, and runs the
// reaper once: what the session-churn workload does to a server, in miniature.
func churn(t *testing.T, inst *Instance, clock *fakeClock) []*client {
	t.Helper()
	cs := []*client{mustInit(t, inst.URL), mustInit(t, inst.URL), mustInit(t, inst.URL)}
	var res struct{ Content []any }
	cs[0].call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}).result(t, &res)
	if resp := cs[2].request(http.MethodDelete, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	clock.Advance(inst.Server.Config().SessionTTL + time.Second)
	inst.Server.reap(nil)
	return cs
}

func TestMetricsCountSessionsAndReclaim(t *testing.T) {
	clock := newFakeClock()
	inst := startInstance(t, Config{SessionTTL: time.Minute, Now: clock.Now})
	before := scrape(t, inst)
	want(t, before, map[string]float64{"sessions_held": 0, "sessions_opened_total": 0})
	if before[MetricsPrefix+"process_resident_memory_bytes"] <= 0 {
		t.Errorf("process_resident_memory_bytes not exposed or 0")
	}
	c1 := mustInit(t, inst.URL)
	mustInit(t, inst.URL)
	want(t, scrape(t, inst), map[string]float64{"sessions_held": 2, "sessions_live": 2, "sessions_opened_total": 2})

	churn(t, inst, clock)
	if st, _ := c1.status("ping"); st != http.StatusNotFound {
		t.Fatalf("ping on an expired session: %d; want 404", st)
	}
	got := scrape(t, inst)
	want(t, got, map[string]float64{
		"sessions_held": 0, "sessions_live": 0, "sessions_opened_total": 5,
		"sessions_deleted_total": 1, "sessions_expired_total": 4, "max_sessions": 0,
		`requests_total{code="200"}`: 7, // 5 initializes, the echo and the DELETE
	})
	if got[MetricsPrefix+`requests_total{code="404"}`] != 1 {
		t.Errorf("requests_total{code=\"404\"} = %v; want 1 (the ping on an expired session)", got[MetricsPrefix+`requests_total{code="404"}`])
	}
}

func TestLeakKeepsDeadSessionsHeld(t *testing.T) {
	clock := newFakeClock()
	inst := startInstance(t, Config{SessionTTL: time.Minute, Leak: true, Now: clock.Now})
	cs := churn(t, inst, clock)
	// The dead stay dead on the wire: the leak is memory, never liveness.
	for i, c := range cs {
		if st, _ := c.status("ping"); st != http.StatusNotFound {
			t.Errorf("session %d: ping after its death: %d; want 404", i, st)
		}
	}
	got := scrape(t, inst)
	want(t, got, map[string]float64{
		"sessions_held": 3, "sessions_live": 0, "sessions_deleted_total": 1, "sessions_expired_total": 2,
		"event_logs": 3,
	})
	if got[MetricsPrefix+"event_log_entries"] < 1 || got[MetricsPrefix+"event_log_bytes"] < 1 {
		t.Errorf("event logs of leaked sessions: %v entries, %v bytes; want the echo's response kept",
			got[MetricsPrefix+"event_log_entries"], got[MetricsPrefix+"event_log_bytes"])
	}
	// The same numbers as JSON, for a status-page probe.
	resp, err := http.Get("http://" + inst.Addr + SessionsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct{ Sessions map[string]int64 }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || page.Sessions["held"] != 3 || page.Sessions["deleted"] != 1 || page.Sessions["expired"] != 2 {
		t.Errorf("%s = %+v, %v; want held 3, deleted 1, expired 2", SessionsPath, page.Sessions, err)
	}
	// A second sweep frees nothing and counts nothing twice.
	inst.Server.reap(nil)
	want(t, scrape(t, inst), map[string]float64{"sessions_held": 3, "sessions_expired_total": 2})
	if at, dead := inst.DeathTime(cs[0].session); !dead || at.IsZero() {
		t.Errorf("DeathTime of a leaked session = %v, %v; want its death", at, dead)
	}
}

func TestMaxSessionsRefusesWith503(t *testing.T) {
	for _, leak := range []bool{false, true} {
		t.Run(map[bool]string{false: "reclaims", true: "leaks"}[leak], func(t *testing.T) {
			inst := startInstance(t, Config{MaxSessions: 2, Leak: leak})
			c := mustInit(t, inst.URL)
			mustInit(t, inst.URL)
			resp := newClient(t, inst.URL).post("initialize", map[string]any{"protocolVersion": "2025-11-25"})
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Mcp-Session-Id") != "" {
				t.Fatalf("initialize beyond max_sessions: %d, session %q; want 503 and none", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
			}
			if resp := c.request(http.MethodDelete, ""); resp.StatusCode != http.StatusOK {
				t.Fatalf("DELETE: %d", resp.StatusCode)
			}
			// A DELETE frees a place, unless the server leaks it.
			resp = newClient(t, inst.URL).post("initialize", map[string]any{"protocolVersion": "2025-11-25"})
			wantStatus := map[bool]int{false: http.StatusOK, true: http.StatusServiceUnavailable}[leak]
			if resp.StatusCode != wantStatus {
				t.Fatalf("initialize after a DELETE: %d; want %d", resp.StatusCode, wantStatus)
			}
			refused := map[bool]float64{false: 1, true: 2}[leak]
			got := scrape(t, inst)
			want(t, got, map[string]float64{"sessions_held": 2, "sessions_refused_total": refused, "max_sessions": 2,
				`requests_total{code="503"}`: refused})
		})
	}
}

// A cluster's metrics sum its replicas' sessions and count a shared event log once.
func TestMetricsOfACluster(t *testing.T) {
	inst, err := StartCluster("127.0.0.1:0", Config{MaxSessions: 1}, Topology{Replicas: 2, Routing: RouteRoundRobin, EventLog: LogShared})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	a := mustInit(t, inst.URL)
	mustInit(t, inst.URL) // round robin: one session on each replica
	var res struct{ Content []any }
	a.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "a"}}).result(t, &res)
	// Each replica holds its one session, its cap: a third initialize is refused by either.
	if resp := newClient(t, inst.URL).post("initialize", map[string]any{"protocolVersion": "2025-11-25"}); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("initialize beyond each replica's cap: %d; want 503", resp.StatusCode)
	}
	got := scrape(t, inst)
	want(t, got, map[string]float64{"sessions_held": 2, "sessions_live": 2, "sessions_opened_total": 2,
		"sessions_refused_total": 1, "event_logs": 2, `requests_total{code="503"}`: 1})
}
