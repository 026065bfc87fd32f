package wiredriver_test

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/refserver"
)

const listenClients = 4

// listenRun runs a stateless group of listenClients against u for 2.4 s, with the proxy down
// from 600 ms for 500 ms, and returns its counters and what it could not observe.
func listenRun(t *testing.T, u, tool string) (*metrics.Snapshot, []string) {
	t.Helper()
	target, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	inj, err := faults.NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	ctx := context.Background()
	listen, err := inj.AddProxy(ctx, "g", target.Host)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := wire.NewHTTPClient(wire.Conn{URL: target, Dial: listen, MaxConns: 32})
	if err != nil {
		t.Fatal(err)
	}
	ep := &wire.Endpoint{URL: u, HTTP: hc, Protocol: wire.ProtocolStateless, Generation: wire.Stateless,
		RequestTimeout: 3 * time.Second, MaxBody: 1 << 20, MaxEvent: 1 << 20, ClientName: "mcpchaos-g"}
	pol, _ := policy.New(policy.NameNaive, policy.Config{Retries: 3})
	rec := metrics.NewRecorder("g", "naive", listenClients)
	f := fleet.New(fleet.GroupConfig{
		Name: "g", Clients: listenClients, Policy: pol, Probe: "ping", DeadStatuses: []int{404, 410},
		RetryBackoff: 50 * time.Millisecond, CallEvery: 300 * time.Millisecond, Tool: tool, Concurrency: 1,
		ReconnectDelay: 50 * time.Millisecond, ReconnectMax: 300 * time.Millisecond,
	}, ep, rec, truth.NewEstimated(0), func(time.Duration) bool { return true })
	start := time.Now()
	runCtx, cancel := context.WithDeadline(ctx, start.Add(2400*time.Millisecond))
	defer cancel()
	sched := make(chan error, 1)
	go func() {
		sched <- faults.RunSchedule(runCtx, inj, start, []faults.Scheduled{
			{Fault: faults.Toxic{Name: "out", Type: faults.TypeDown}, Proxies: []string{"g"}, At: 600 * time.Millisecond, For: 500 * time.Millisecond},
		}, nil)
	}()
	f.Run(runCtx, start)
	if err := <-sched; err != nil {
		t.Fatal(err)
	}
	snap := rec.Snapshot()
	return snap, f.NotObservable()
}

// Against the reference server (numbered notifications), every client holds a listen stream;
// an outage cuts them (listen_drops), the clients listen again once it is over, and the
// notifications broadcast in between are lost: gaps in the server's numbers. Bounds only: the
// machine is loaded, and how long a re-listen takes is its own.
func TestListenStreamsReferenceServer(t *testing.T) {
	inst, err := refserver.Start("127.0.0.1:0", refserver.Config{SessionTTL: time.Minute, NotifyInterval: 40 * time.Millisecond}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	snap, na := listenRun(t, inst.URL, "echo")
	st := inst.Server.Stats()
	c := func(m metrics.Counter) int64 { return snap.Counter(m) }
	t.Logf("listens %d drops %d received %d lost %d; server broadcast %d, wrote %d",
		c(metrics.Listens), c(metrics.ListenDrops), c(metrics.NotificationsReceived), c(metrics.NotificationsLost), st.ListenSeq, st.ListenNotified)
	if c(metrics.Listens) <= listenClients || c(metrics.ListenDrops) == 0 {
		t.Errorf("an outage cut the listen streams, yet listens %d (clients %d), listen_drops %d", c(metrics.Listens), listenClients, c(metrics.ListenDrops))
	}
	if c(metrics.NotificationsLost) == 0 {
		t.Errorf("the server broadcast every 40 ms through a 500 ms outage, yet no notification was lost")
	}
	// What the clients read, and what they counted lost, the server numbered: no more than it
	// broadcast to each, and no more received than it wrote.
	if got := c(metrics.NotificationsReceived) + c(metrics.NotificationsLost); got > listenClients*int64(st.ListenSeq) {
		t.Errorf("received + lost = %d, more than %d clients x %d broadcast", got, listenClients, st.ListenSeq)
	}
	if c(metrics.NotificationsReceived) > st.ListenNotified || c(metrics.NotificationsReceived) == 0 {
		t.Errorf("received %d, the server wrote %d", c(metrics.NotificationsReceived), st.ListenNotified)
	}
	if c(metrics.ToolCallsOK) == 0 {
		t.Errorf("no stateless tool call succeeded beside the listen streams")
	}
	if slices.Contains(na, "notifications_lost") || slices.Contains(na, "listens") {
		t.Errorf("the listen figures are listed as not observable against numbered notifications: %v", na)
	}
}

// The Go SDK's stateless server offers listen streams but numbers nothing: the listen figures
// are measured, notifications_lost is listed as not observable (a gap cannot be seen), and
// the clients read no more notifications than the server sent.
func TestListenStreamsGoSDKStateless(t *testing.T) {
	p := peers.GoSDKStateless(t, peers.Options{Notify: 50 * time.Millisecond})
	snap, na := listenRun(t, p.URL, "lookup_order")
	st := p.Stats()
	c := func(m metrics.Counter) int64 { return snap.Counter(m) }
	t.Logf("listens %d drops %d received %d; the server sent %d", c(metrics.Listens), c(metrics.ListenDrops), c(metrics.NotificationsReceived), st.Notified)
	if c(metrics.Listens) <= listenClients || c(metrics.ListenDrops) == 0 {
		t.Errorf("an outage cut the listen streams, yet listens %d (clients %d), listen_drops %d", c(metrics.Listens), listenClients, c(metrics.ListenDrops))
	}
	if c(metrics.NotificationsReceived) == 0 || c(metrics.NotificationsReceived) > st.Notified {
		t.Errorf("received %d notifications, the server sent %d", c(metrics.NotificationsReceived), st.Notified)
	}
	if !slices.Contains(na, "notifications_lost") || slices.Contains(na, "listens") {
		t.Errorf("not observable %v: want notifications_lost (the Go SDK numbers nothing) and not listens", na)
	}
}
