package refserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/redistest"
)

// serveCluster starts a Cluster behind an httptest server; both end with the test.
func serveCluster(t *testing.T, cfg Config, topo Topology) (*Cluster, string) {
	t.Helper()
	c, err := NewCluster(cfg, topo)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(c)
	t.Cleanup(func() {
		c.Close()
		ts.Close()
	})
	return c, ts.URL + "/mcp"
}

// echoCursor calls echo and returns the priming id of its POST stream: a cursor whose replay
// holds the echo's response.
func echoCursor(t *testing.T, cl *client) string {
	t.Helper()
	a := cl.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
	if len(a.events) < 2 {
		t.Fatalf("echo answer has %d events, want priming and response", len(a.events))
	}
	return strconv.FormatUint(a.events[0].ID(t), 10)
}

func (c *Cluster) ownerOf(sid string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.owners[sid].slot
}

// A restart loses the replica's in-memory sessions. Where the event log lives decides what a
// reconnect gets: a shared log (in memory or Redis) replays the dead session with 200, the
// seed's trap; a per-replica log died with the replica, so the replay is refused. In every
// case the next session-scoped request gets 404 and the death is known exactly.
func TestClusterRestart(t *testing.T) {
	for _, tc := range []struct {
		log        string
		replayCode int
	}{
		{LogShared, http.StatusOK},
		{LogPerReplica, http.StatusNotFound},
		{"redis", http.StatusOK},
	} {
		t.Run(tc.log, func(t *testing.T) {
			topo := Topology{Replicas: 2, EventLog: tc.log}
			if tc.log == "redis" {
				topo.EventLog = redistest.Start(t)
			}
			c, url := serveCluster(t, Config{SessionTTL: time.Hour, Retention: time.Hour}, topo)
			cl := mustInit(t, url)
			cursor := echoCursor(t, cl)
			slot := c.ownerOf(cl.session)
			before := time.Now()
			if err := c.Restart(slot, "deploy", 0); err != nil {
				t.Fatal(err)
			}
			after := time.Now()

			resp := cl.get(cursor)
			if resp.StatusCode != tc.replayCode {
				t.Fatalf("replay after the restart: status %d, want %d", resp.StatusCode, tc.replayCode)
			}
			if tc.replayCode == http.StatusOK {
				body, _ := io.ReadAll(resp.Body) // a resumed POST stream ends after its response
				if !strings.Contains(string(body), `"result"`) {
					t.Errorf("replay %q lacks the echo's response", body)
				}
			}
			if code, _ := cl.status("ping"); code != http.StatusNotFound {
				t.Errorf("ping after the restart: %d, want 404", code)
			}
			d, dead := c.Death(cl.session)
			if !dead || d.Cause != CauseRestart || d.Fault != "deploy" || d.Replica != slot || d.At.Before(before) || d.At.After(after) {
				t.Errorf("death = %+v, %v; want restart by deploy on replica %d between %s and %s", d, dead, slot, before, after)
			}
			if got := c.Deaths(); len(got) != 1 || got[0] != (DeathCount{CauseRestart, "deploy", slot, 1}) {
				t.Errorf("deaths = %+v", got)
			}
			// The other replica's sessions, and new ones, are untouched.
			fresh := mustInit(t, url)
			if code, _ := fresh.status("ping"); code != http.StatusOK {
				t.Errorf("a new session after the restart: ping %d", code)
			}
		})
	}
}

// A restarted process drains for its grace: it goes on logging for the sessions it lost, and a
// shared log hands those events to a reconnecting client, who would apply them to a dead
// session.
func TestClusterRestartDrainLogsIntoSharedLog(t *testing.T) {
	c, url := serveCluster(t, Config{SessionTTL: time.Hour, NotifyInterval: 5 * time.Millisecond}, Topology{Replicas: 1, EventLog: LogShared})
	cl := mustInit(t, url)
	cursor := echoCursor(t, cl)
	st := openStream(t, cl.get(""))
	getCursor := st.next().ID(t) // the GET stream's priming event
	if err := c.Restart(0, "deploy", time.Hour); err != nil {
		t.Fatal(err)
	}
	st.ends() // cut at once
	_ = cursor
	replay := openStream(t, cl.get(strconv.FormatUint(getCursor, 10)))
	// Notifications logged by the draining process after the death arrive on the replay.
	if e := replay.message(); !strings.Contains(e.data, "notifications/message") {
		t.Fatalf("replay gave %q, want a notification of the dead session", e.data)
	}
	if code, _ := cl.status("ping"); code != http.StatusNotFound {
		t.Errorf("ping: %d, want 404", code)
	}
}

// After a rebalance a session whose request lands on another replica is dead from that
// request on, recorded with the fault; one that lands on its own replica lives on.
func TestClusterRebalance(t *testing.T) {
	c, url := serveCluster(t, Config{SessionTTL: time.Hour}, Topology{Replicas: 3, EventLog: LogShared})
	var cls []*client
	for range 5 { // not a multiple of 3: the round-robin re-pinning cannot line up with the old pins
		cls = append(cls, mustInit(t, url))
	}
	c.Rebalance("lb-reload")
	died := 0
	for _, cl := range cls {
		code, _ := cl.status("ping")
		d, dead := c.Death(cl.session)
		switch {
		case code == http.StatusNotFound && dead && d.Cause == CauseRebalance && d.Fault == "lb-reload":
			died++
			if again, _ := cl.status("ping"); again != http.StatusNotFound {
				t.Errorf("a lost session answered %d on its next request", again)
			}
		case code == http.StatusOK && !dead:
		default:
			t.Errorf("ping %d with death %+v, %v: the truth and the answer disagree", code, d, dead)
		}
	}
	if died == 0 {
		t.Error("no session lost its replica")
	}
}

// A scale-down kills the removed replicas' sessions; sticky survivors stay where they are; a
// scale-up adds empty replicas.
func TestClusterScale(t *testing.T) {
	c, url := serveCluster(t, Config{SessionTTL: time.Hour}, Topology{Replicas: 3})
	var cls []*client
	for range 6 {
		cls = append(cls, mustInit(t, url))
	}
	if err := c.Scale(1, "autoscaler"); err != nil {
		t.Fatal(err)
	}
	if got := c.Slots(); len(got) != 1 || got[0] != 0 {
		t.Fatalf("slots = %v", got)
	}
	for _, cl := range cls {
		slot := c.ownerOf(cl.session)
		code, _ := cl.status("ping")
		d, dead := c.Death(cl.session)
		if slot == 0 && (code != 200 || dead) || slot != 0 && (code != 404 || d.Cause != CauseScale || d.Fault != "autoscaler" || d.Replica != slot) {
			t.Errorf("session on replica %d: ping %d, death %+v %v", slot, code, d, dead)
		}
	}
	if err := c.Scale(3, "autoscaler"); err != nil || len(c.Slots()) != 3 {
		t.Fatalf("scale up: %v, slots %v", err, c.Slots())
	}
	if err := c.Scale(0, "x"); err == nil {
		t.Error("scaling to 0 replicas was accepted")
	}
}

// Without affinity every request goes to the next replica: a session is lost at its first
// request that lands elsewhere.
func TestClusterRoundRobinLosesSessions(t *testing.T) {
	c, url := serveCluster(t, Config{SessionTTL: time.Hour}, Topology{Replicas: 2, Routing: RouteRoundRobin})
	cl := mustInit(t, url)
	codes := []int{}
	for range 2 {
		code, _ := cl.status("ping")
		codes = append(codes, code)
	}
	d, dead := c.Death(cl.session)
	if codes[1] != 404 || !dead || d.Cause != CauseRebalance || d.Fault != "" {
		t.Errorf("pings %v, death %+v %v", codes, d, dead)
	}
}

// TTL deaths on a replica keep their cause, and the cluster's truth answers for them.
func TestClusterTTLDeath(t *testing.T) {
	clock := newFakeClock()
	c, url := serveCluster(t, Config{SessionTTL: time.Minute, Now: clock.Now}, Topology{Replicas: 2})
	cl := mustInit(t, url)
	clock.Advance(2 * time.Minute)
	d, dead := c.Death(cl.session)
	if !dead || d.Cause != CauseTTL || d.Replica != c.ownerOf(cl.session) {
		t.Errorf("death %+v %v", d, dead)
	}
	// A restart afterwards does not change how it died.
	_ = c.Restart(c.ownerOf(cl.session), "deploy", 0)
	if d2, _ := c.Death(cl.session); d2 != d {
		t.Errorf("after a restart the death became %+v, was %+v", d2, d)
	}
}

func TestTopologyValidate(t *testing.T) {
	for _, bad := range []Topology{{Replicas: 65}, {Routing: "random"}, {EventLog: "memcached://x"}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := NewCluster(Config{}, Topology{EventLog: "redis://127.0.0.1:1/0"}); err == nil || !strings.Contains(err.Error(), "PING") {
		t.Errorf("an unreachable Redis: %v", err)
	}
}
