package faults

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/mcpchaos/mcpchaos/faults/toxiproxytest"
)

// names lists the proxies on a toxiproxy-server.
func names(t *testing.T, api string) []string {
	t.Helper()
	all, err := toxiproxy.NewClient(api).Proxies()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for n := range all {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func newExternal(t *testing.T, api string) *External {
	t.Helper()
	e, err := NewExternal(api, NewRunPrefix(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// One run's proxies on a real toxiproxy-server: created under the run's prefix, faulted,
// and all gone after Close, while another run's proxy on the same server is left alone.
func TestExternalLifecycle(t *testing.T) {
	api := toxiproxytest.Start(t)
	upstream, ended := echoServer(t)
	ctx := context.Background()
	other := newExternal(t, api)
	if _, err := other.AddProxy(ctx, "naive", upstream); err != nil {
		t.Fatal(err)
	}
	e := newExternal(t, api)
	listen, err := e.AddProxy(ctx, "naive", upstream)
	if err != nil {
		t.Fatal(err)
	}
	if host, port, _ := net.SplitHostPort(listen); host != "127.0.0.1" || port == "0" {
		t.Fatalf("listen = %q, want 127.0.0.1:PORT", listen)
	}
	if got := names(t, api); !slices.Contains(got, e.Prefix()+"naive") || !slices.Contains(got, other.Prefix()+"naive") {
		t.Fatalf("proxies on the server: %v", got)
	}

	c := dial(t, listen)
	r := bufio.NewReader(c)
	roundTrip(t, c, r)
	const latency = 150 * time.Millisecond
	if err := e.AddToxic(ctx, "naive", Toxic{Name: "slow", Type: "latency", Attributes: map[string]any{"latency": int64(150)}}); err != nil {
		t.Fatal(err)
	}
	if d := roundTrip(t, c, r); d < latency {
		t.Fatalf("round trip with latency took %v, want at least %v", d, latency)
	}
	tox, err := e.proxies["naive"].p.Toxics()
	if err != nil || len(tox) != 1 || tox[0].Toxicity != 1 || tox[0].Stream != Downstream {
		t.Fatalf("toxics on the server: %+v %v; want one, toxicity 1, downstream", tox, err)
	}
	if err := e.RemoveToxic(ctx, "naive", "slow"); err != nil {
		t.Fatal(err)
	}

	if err := e.AddToxic(ctx, "naive", Toxic{Name: "outage", Type: TypeDown}); err != nil {
		t.Fatal(err)
	}
	if err := waitEOF(r); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("open connection during down: %v, want it cut", err)
	}
	waitEnded(t, ended, "down")
	if c, err := net.Dial("tcp", listen); err == nil {
		c.Close()
		t.Fatal("dial succeeded while the proxy was down")
	}
	if err := e.RemoveToxic(ctx, "naive", "outage"); err != nil {
		t.Fatal(err)
	}
	again := dial(t, listen)
	roundTrip(t, again, bufio.NewReader(again))

	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, api); slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, e.Prefix()) }) ||
		!slices.Contains(got, other.Prefix()+"naive") {
		t.Fatalf("after Close the server has %v; want only the other run's proxy", got)
	}
	if c, err := net.Dial("tcp", listen); err == nil {
		c.Close()
		t.Fatal("the proxy still listens after Close")
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := e.AddProxy(ctx, "probe", upstream); !errors.Is(err, ErrClosed) {
		t.Fatalf("AddProxy after Close = %v, want ErrClosed", err)
	}
}

// The reset_peer trap holds on a toxiproxy-server as in the embedded one.
func TestExternalResetPeerResetsNewConnectionsOnly(t *testing.T) {
	api := toxiproxytest.Start(t)
	upstream, _ := echoServer(t)
	e := newExternal(t, api)
	listen, err := e.AddProxy(context.Background(), "p", upstream)
	if err != nil {
		t.Fatal(err)
	}
	old := dial(t, listen)
	oldR := bufio.NewReader(old)
	roundTrip(t, old, oldR)
	if err := e.AddToxic(context.Background(), "p", Toxic{Name: "rst", Type: "reset_peer"}); err != nil {
		t.Fatal(err)
	}
	fresh := dial(t, listen)
	io.WriteString(fresh, "ping\n")
	if err := waitEOF(fresh); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("new connection: %v, want connection reset", err)
	}
	io.WriteString(old, "ping\n")
	if err := waitEOF(oldR); !errors.Is(err, io.EOF) {
		t.Fatalf("connection opened before reset_peer: %v, want a plain EOF", err)
	}
}

// Check finds, before any run, the toxics the server refuses, and leaves nothing behind.
func TestExternalCheck(t *testing.T) {
	api := toxiproxytest.Start(t)
	e := newExternal(t, api)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		toxics  []Toxic
		wantErr []string
	}{
		{"Toxiproxy's own toxics", []Toxic{
			{Name: "slow", Type: "latency", Attributes: map[string]any{"latency": 10, "jitter": 5}},
			{Name: "rst", Type: "reset_peer", Stream: Upstream},
			{Name: "cut", Type: "limit_data", Attributes: map[string]any{"bytes": 100}},
			{Name: "outage", Type: TypeDown},
		}, nil},
		{"mcpchaos's own idle_timeout", []Toxic{{Name: "lb", Type: "idle_timeout", Attributes: map[string]any{"timeout": 100}}},
			[]string{"fault lb: the toxiproxy-server at " + api + " refuses it", "idle_timeout is mcpchaos's own toxic", "run without --toxiproxy"}},
		{"bad attributes", []Toxic{{Name: "s", Type: "slicer", Attributes: map[string]any{"average_size": 0}}},
			[]string{"fault s: attribute \"average_size\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.Check(ctx, tc.toxics)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatal(err)
			case tc.wantErr != nil && err == nil:
				t.Fatal("Check accepted it")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\ndoes not say %q", err, w)
				}
			}
			if got := names(t, api); len(got) != 0 {
				t.Errorf("Check left %v on the server", got)
			}
		})
	}
}

// What a crashed run left (no Close) is removed by Clean, by prefix; others' proxies stay.
func TestClean(t *testing.T) {
	api := toxiproxytest.Start(t)
	upstream, _ := echoServer(t)
	ctx := context.Background()
	crashed, err := NewExternal(api, NewRunPrefix(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"naive", "probe"} {
		if _, err := crashed.AddProxy(ctx, g, upstream); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := toxiproxy.NewClient(api).CreateProxy("someone-elses", "127.0.0.1:0", upstream); err != nil {
		t.Fatal(err)
	}
	removed, err := Clean(api, NamePrefix)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{crashed.Prefix() + "naive", crashed.Prefix() + "probe"}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	if got := names(t, api); !slices.Equal(got, []string{"someone-elses"}) {
		t.Errorf("left on the server: %v", got)
	}
	if _, err := Clean(api, "someone-"); err == nil {
		t.Error("Clean accepted a prefix that is not mcpchaos's")
	}
}

func TestNewExternalUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = NewExternal("http://"+addr, NewRunPrefix(), "")
	if err == nil || !strings.Contains(err.Error(), "does not answer") || !strings.Contains(err.Error(), "go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0") {
		t.Fatalf("err = %v", err)
	}
}
