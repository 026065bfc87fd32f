package workloads

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// keepaliveWorkload is a built-in target whose keepalive line is ka (indented as a value of
// target.builtin, line 5 of the file).
func keepaliveWorkload(ka string) string {
	return `name: t
target:
  builtin:
    session_ttl: 2s
    keepalive: ` + ka + `
phases:
  - {name: a, duration: 1s, calls: true}
groups:
  - {name: g, clients: 1, policy: probe}
`
}

func TestKeepaliveShapes(t *testing.T) {
	for _, tc := range []struct {
		ka    string
		shape string
		every time.Duration
	}{
		{"15s", "", 15 * time.Second}, // as before shapes: comments
		{"0s", "", 0},
		{"none", vocab.KeepaliveNone, 0},
		{"{shape: none}", vocab.KeepaliveNone, 0},
		{"{every: 300ms}", vocab.KeepaliveComment, 300 * time.Millisecond},
		{"{shape: comment, every: 1s}", vocab.KeepaliveComment, time.Second},
		{"{shape: event, every: 1s}", vocab.KeepaliveEvent, time.Second},
		{"{shape: no-id, every: 4m}", vocab.KeepaliveNoID, 4 * time.Minute},
		{"\n      shape: event\n      every: 2s", vocab.KeepaliveEvent, 2 * time.Second},
		{"\n      every: 2s", vocab.KeepaliveComment, 2 * time.Second}, // a one-key block mapping
	} {
		w, err := Parse("k.yaml", []byte(keepaliveWorkload(tc.ka)))
		if err != nil {
			t.Errorf("keepalive: %s: %v", tc.ka, err)
			continue
		}
		if b := w.Target.Builtin; b.KeepaliveShape != tc.shape || b.Keepalive != tc.every {
			t.Errorf("keepalive: %s: shape %q every %s, want %q %s", tc.ka, b.KeepaliveShape, b.Keepalive, tc.shape, tc.every)
		}
	}
}

func TestKeepaliveErrors(t *testing.T) {
	for _, tc := range []struct{ ka, want string }{
		{"{shape: ping, every: 1s}", `k.yaml:5:24: target.builtin.keepalive.shape: unknown value "ping"`},
		{"{shape: event}", "k.yaml:5:16: target.builtin.keepalive.every: missing; set how often each open stream gets a keep-alive"},
		{"{shape: no-id, every: 0s}", "k.yaml:5:38: target.builtin.keepalive.every: must be greater than 0"},
		{"{shape: comment, every: 1ms}", "k.yaml:5:40: target.builtin.keepalive.every: 1ms is shorter than 10ms"},
		{"{shape: none, every: 1s}", "k.yaml:5:30: target.builtin.keepalive.every: a keep-alive of shape none is never sent"},
		{"{shape: event, every: 1s, jitter: 1s}", `k.yaml:5:42: target.builtin.keepalive.jitter: unknown key "jitter"`},
		{"sometimes", "k.yaml:5:16: target.builtin.keepalive:"},
	} {
		_, err := Parse("k.yaml", []byte(keepaliveWorkload(tc.ka)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("keepalive: %s: error %v, want %q", tc.ka, err, tc.want)
		}
	}
}

func TestKeepaliveValidate(t *testing.T) {
	w, err := Parse("k.yaml", []byte(keepaliveWorkload("{shape: event, every: 1s}")))
	if err != nil {
		t.Fatal(err)
	}
	w.Target.Builtin.Keepalive = 0
	if err := w.Validate(); err == nil || !strings.Contains(err.Error(), "target.builtin.keepalive.every: is needed for a keep-alive of shape event") {
		t.Errorf("Validate of shape event without every: %v", err)
	}
	w.Target.Builtin.Keepalive, w.Target.Builtin.KeepaliveShape = time.Second, "pong"
	if err := w.Validate(); err == nil || !strings.Contains(err.Error(), "target.builtin.keepalive.shape") {
		t.Errorf("Validate of shape pong: %v", err)
	}
}

// The keep-alive examples load, with the shape, interval and idle cutoff their comments say.
func TestKeepaliveExamples(t *testing.T) {
	for _, tc := range []struct {
		file   string
		every  time.Duration
		cutoff int64 // ms
	}{
		{"examples/keepalive-libraries.yaml", time.Second, 2000},
		{"examples/idle-cutoff-300s.yaml", 30 * time.Second, 300_000},
	} {
		w, err := Load(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		b := w.Target.Builtin
		if b.KeepaliveShape != vocab.KeepaliveComment || b.Keepalive != tc.every || b.NotifyInterval != 0 {
			t.Errorf("%s: keepalive %q every %s, notify_interval %s", tc.file, b.KeepaliveShape, b.Keepalive, b.NotifyInterval)
		}
		if len(w.Faults) != 1 || w.Faults[0].Toxic != "idle_timeout" || w.Faults[0].Attributes["timeout"] != tc.cutoff || w.Faults[0].For != 0 {
			t.Errorf("%s: faults %+v, want one idle_timeout of %d ms for the whole run", tc.file, w.Faults, tc.cutoff)
		}
	}
}
