//go:build unix

package peers

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The TypeScript SDK server's idle timer counts idleness, not the machine's stalls (issue 30:
// at load 25-30 its node process, starved, ended sessions whose clients were calling every
// 300 ms, a TTL of 1.5 s, and TestInteropValidatingGET failed in its first phase). Node is
// stopped (SIGSTOP) for longer than the TTL while a client keeps sending pings: when it runs
// again its timers fire before it reads the pings, which must still count. Once the client
// stops, the session ends after the TTL as before.
func TestTSIdleTimerOutlastsAStall(t *testing.T) {
	const ttl = 1500 * time.Millisecond
	srv := TS(t, Options{SessionTTL: ttl})
	s := open(t, srv.URL)
	statsURL := strings.TrimSuffix(srv.URL, "/mcp") + "/stats"
	pid := tsStats(t, statsURL).PID
	if pid <= 0 {
		t.Fatalf("the server gave no process id")
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	stop := make(chan struct{})
	wg.Go(func() { // the client: a ping every 200 ms, each on its own, as a busy client's calls
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			wg.Go(func() {
				code := ping(srv.URL, s.id)
				mu.Lock()
				statuses[code]++
				mu.Unlock()
			})
		}
	})
	time.Sleep(300 * time.Millisecond) // pings before the stall: the story, not a synchronisation
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * ttl) // the stall, longer than the TTL
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // pings after it
	close(stop)
	wg.Wait()
	if st := tsStats(t, statsURL); len(statuses) != 1 || statuses[http.StatusOK] == 0 || st.Expired != 0 {
		t.Errorf("pings answered %v, sessions expired %d: want every ping answered 200, none expired", statuses, st.Expired)
	}
	// Idle now: the session ends after the TTL, and the next request is told so.
	deadline := time.Now().Add(30 * time.Second)
	for tsStats(t, statsURL).Expired == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if code := ping(srv.URL, s.id); code != http.StatusNotFound {
		t.Errorf("a ping after the session idled out: %d, want 404", code)
	}
}

// tsStatsReply is the part of the TS server's /stats this test reads.
type tsStatsReply struct {
	Expired int `json:"expired"`
	PID     int `json:"pid"`
}

func tsStats(t *testing.T, u string) tsStatsReply {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st tsStatsReply
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// ping sends a ping on session id and returns the status (0: no answer).
func ping(u, id string) int {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", id)
	c := http.Client{Timeout: 20 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
