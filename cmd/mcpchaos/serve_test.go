package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/refserver"
)

// serve --from takes the workload's regime; a flag given beside it wins, a flag left at its
// default does not replace the workload's value.
func TestServeFromFlagsOverride(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		ttl      time.Duration
		get      refserver.GetValidation
		dead     int
		replicas int
	}{
		{[]string{"--from", "seed-incident-fast"}, 3 * time.Second, "permissive", 404, 1},
		{[]string{"--from", "seed-incident-fast", "--ttl", "7s", "--get-validation", "strict", "--dead-status", "410"}, 7 * time.Second, "strict", 410, 1},
		{[]string{"--from", "seed-incident-fast", "--replicas", "3"}, 3 * time.Second, "permissive", 404, 3},
		{[]string{"--ttl", "5s"}, 5 * time.Second, "permissive", 0, 1},
	} {
		cmd := newServeCmd()
		if err := cmd.ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		from, _ := cmd.Flags().GetString("from")
		getVal, _ := cmd.Flags().GetString("get-validation")
		ttl, _ := cmd.Flags().GetDuration("ttl")
		dead, _ := cmd.Flags().GetInt("dead-status")
		replicas, _ := cmd.Flags().GetInt("replicas")
		cfg, topo, err := serveSettings(cmd, from, refserver.Config{SessionTTL: ttl, DeadStatus: dead}, refserver.Topology{Replicas: replicas}, getVal)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if cfg.SessionTTL != tc.ttl || cfg.GetValidation != tc.get || cfg.DeadStatus != tc.dead || topo.Replicas != tc.replicas {
			t.Errorf("%v: ttl %v, get %q, dead %d, replicas %d; want %v, %q, %d, %d",
				tc.args, cfg.SessionTTL, cfg.GetValidation, cfg.DeadStatus, topo.Replicas, tc.ttl, tc.get, tc.dead, tc.replicas)
		}
	}
}

// serve's keep-alive flags: a shape is taken as given, and a wrong one is named by its flag.
func TestServeKeepaliveFlags(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		shape string
		err   string
	}{
		{[]string{"--keepalive", "15s"}, "", ""},
		{[]string{"--keepalive", "1s", "--keepalive-shape", "no-id"}, "no-id", ""},
		{[]string{"--keepalive-shape", "none"}, "none", ""},
		{[]string{"--keepalive", "1s", "--keepalive-shape", "pong"}, "", `--keepalive-shape "pong": want one of comment, event, no-id, none`},
		{[]string{"--keepalive-shape", "event"}, "", "--keepalive-shape event needs an interval: add --keepalive 15s"},
	} {
		cmd := newServeCmd()
		if err := cmd.ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		every, _ := cmd.Flags().GetDuration("keepalive")
		shape, _ := cmd.Flags().GetString("keepalive-shape")
		cfg, _, err := serveSettings(cmd, "", refserver.Config{Keepalive: every, KeepaliveShape: shape}, refserver.Topology{Replicas: 1}, "permissive")
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.err == "" && cfg.KeepaliveShape != tc.shape:
			t.Errorf("%v: shape %q, want %q", tc.args, cfg.KeepaliveShape, tc.shape)
		}
	}
}
