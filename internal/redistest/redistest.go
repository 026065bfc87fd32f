// Package redistest starts a real redis-server for tests, on a free loopback port, and stops it
// by its PID when the test ends, as net/http/httptest starts HTTP servers.
//
// redis-server comes from Debian's redis-server package (.ci/run installs it). Where it is
// missing, Start skips the test saying how to get it, except under CI=true, where a missing
// component is a failure.
package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/mcpchaos/mcpchaos/internal/loopback"
	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
)

// Start runs a redis-server with no persistence on 127.0.0.1 and returns its URL
// (redis://127.0.0.1:PORT/0); it is stopped when t ends.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is not installed, and CI must run the Redis event-log tests: .ci/run installs Debian's redis-server")
		}
		t.Skip("redis-server is not installed: the Redis event-log tests need it (apt-get install redis-server)")
	}
	var last string
	for range 3 { // a freed port can be taken by someone else before redis binds it
		url, out, ok := try(t, bin)
		if ok {
			return url
		}
		last = out
	}
	t.Fatalf("redis-server did not start:\n%s", last)
	return ""
}

func try(t testing.TB, bin string) (string, string, bool) {
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatalf("finding a free loopback port: %v", err)
	}
	out := &syncbuf.Buffer{}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--protected-mode", "yes")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM) // ours, by PID
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := ping(url)
		if err == nil {
			t.Cleanup(stop)
			return url, "", true
		}
		select {
		case <-exited:
			return "", out.String(), false
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return "", out.String() + "\n(no PONG within 10s: " + err.Error() + ")", false
		}
		time.Sleep(20 * time.Millisecond) // polling for readiness, not synchronising a result
	}
}

// ping dials url and sends one PING, within a second.
func ping(url string) error {
	c, err := redis.DialURL(url, redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(time.Second),
		redis.DialWriteTimeout(time.Second))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Do("PING")
	return err
}
