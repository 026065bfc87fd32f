package steady

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

func TestHTTPProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			fmt.Fprint(w, "ok\n")
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/json":
			fmt.Fprint(w, `{"sessions": {"held": 7, "list": [1, 2.5]}, "up": true, "name": "x"}`)
		case "/moved":
			http.Redirect(w, r, "http://10.255.255.1/elsewhere", http.StatusFound)
		case "/huge":
			w.Write([]byte(strings.Repeat("a", 3*MaxBody)))
			fmt.Fprint(w, "needle")
		}
	}))
	defer srv.Close()
	tol := func(s string) *vocab.Tolerance {
		tt, err := vocab.ParseTolerance(s)
		if err != nil {
			t.Fatal(err)
		}
		return &tt
	}
	cases := []struct {
		name string
		p    Probe
		pass bool
		want string // in Detail when it passes, in Why when it fails
	}{
		{"healthz", Probe{Check: HTTP{URL: srv.URL + "/healthz", BodyContains: "ok"}}, true, "status 200"},
		{"down", Probe{Check: HTTP{URL: srv.URL + "/down"}}, false, "status 503, want 200"},
		{"down expected", Probe{Check: HTTP{URL: srv.URL + "/down", Status: 503}}, true, "status 503"},
		{"body lacks", Probe{Check: HTTP{URL: srv.URL + "/healthz", BodyContains: "ready"}}, false, `does not contain "ready"`},
		{"json field", Probe{Check: HTTP{URL: srv.URL + "/json", JSONField: "sessions.held"}, Tolerance: tol("value <= 7")}, true, "sessions.held = 7"},
		{"json field outside", Probe{Check: HTTP{URL: srv.URL + "/json", JSONField: "sessions.held"}, Tolerance: tol("value < 7")}, false, "outside the tolerance value < 7: 7 is not < 7"},
		{"json index", Probe{Check: HTTP{URL: srv.URL + "/json", JSONField: "sessions.list.1"}, Tolerance: tol("value == 2.5")}, true, "= 2.5"},
		{"json bool", Probe{Check: HTTP{URL: srv.URL + "/json", JSONField: "up"}, Tolerance: tol("value == 1")}, true, "up = 1"},
		{"json missing", Probe{Check: HTTP{URL: srv.URL + "/json", JSONField: "sessions.gone"}, Tolerance: tol("value == 1")}, false, "no field sessions.gone"},
		{"json string", Probe{Check: HTTP{URL: srv.URL + "/json", JSONField: "name"}, Tolerance: tol("value == 1")}, false, "not a number"},
		{"not json", Probe{Check: HTTP{URL: srv.URL + "/healthz", JSONField: "a"}, Tolerance: tol("value == 1")}, false, "not JSON"},
		{"redirect not followed", Probe{Check: HTTP{URL: srv.URL + "/moved"}}, false, "status 302, want 200"},
		{"body bounded", Probe{Check: HTTP{URL: srv.URL + "/huge", BodyContains: "needle"}}, false, fmt.Sprintf("the body (%d bytes)", MaxBody)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.p.Run(context.Background(), nil)
			got := r.Detail
			if !c.pass {
				got = r.Why
			}
			if r.Pass != c.pass || !strings.Contains(got, c.want) {
				t.Errorf("pass %v detail %q why %q, want pass %v with %q", r.Pass, r.Detail, r.Why, c.pass, c.want)
			}
		})
	}
}

// A probe is bounded by its timeout: a server that never answers fails it, in about that time.
func TestProbeTimeout(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	began := time.Now()
	r := Probe{Check: HTTP{URL: srv.URL}, Timeout: 100 * time.Millisecond}.Run(context.Background(), nil)
	if r.Pass || !strings.Contains(r.Why, "no answer within 100ms") {
		t.Errorf("result %+v, want no answer within 100ms", r)
	}
	if el := time.Since(began); el > 30*time.Second {
		t.Errorf("the probe took %s", el)
	}
	c := Probe{Check: Command{Command: "sleep", Args: []string{"30"}}, Timeout: 100 * time.Millisecond}.Run(context.Background(), nil)
	if c.Pass || c.Took > 20*time.Second {
		t.Errorf("a command past its timeout: %+v", c)
	}
}

func TestCommandProbe(t *testing.T) {
	tol, _ := vocab.ParseTolerance("value <= 5")
	cases := []struct {
		name string
		p    Probe
		pass bool
		want string
	}{
		{"exit 0", Probe{Check: Command{Command: "sh", Args: []string{"-c", "echo fine"}, OutputContains: "fine"}}, true, "exit 0"},
		{"exit 3", Probe{Check: Command{Command: "sh", Args: []string{"-c", "echo broken; exit 3"}}}, false, "exit status 3, want 0: broken"},
		{"exit 3 expected", Probe{Check: Command{Command: "sh", Args: []string{"-c", "exit 3"}, ExitStatus: 3}}, true, "exit 3"},
		{"output lacks", Probe{Check: Command{Command: "sh", Args: []string{"-c", "echo no"}, OutputContains: "yes"}}, false, `does not contain "yes"`},
		{"number", Probe{Check: Command{Command: "sh", Args: []string{"-c", "echo 4"}, Number: true}, Tolerance: &tol}, true, "output 4"},
		{"number outside", Probe{Check: Command{Command: "sh", Args: []string{"-c", "echo 6"}, Number: true}, Tolerance: &tol}, false, "6 is not <= 5"},
		{"not a number", Probe{Check: Command{Command: "sh", Args: []string{"-c", "echo lots"}, Number: true}, Tolerance: &tol}, false, "is not a number"},
		{"env", Probe{Check: Command{Command: "sh", Args: []string{"-c", "echo $PROBE_X"}, Env: []string{"PROBE_X=42"}, OutputContains: "42"}}, true, "exit 0"},
		{"no such program", Probe{Check: Command{Command: "/nonexistent/probe"}}, false, "running /nonexistent/probe"},
		{"output bounded", Probe{Check: Command{Command: "sh", Args: []string{"-c", "yes | head -c 100000"}, MaxOutput: 10}}, true, "output truncated"},
		{"redacted", Probe{Check: Command{Command: "sh", Args: []string{"-c", "echo s3cret; exit 1"},
			Redact: func(b []byte) []byte { return []byte(strings.ReplaceAll(string(b), "s3cret", "[redacted]")) }}}, false, "[redacted]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.p.Run(context.Background(), nil)
			got := r.Detail
			if !c.pass {
				got = r.Why
			}
			if r.Pass != c.pass || !strings.Contains(got, c.want) || strings.Contains(r.Why, "s3cret") {
				t.Errorf("pass %v detail %q why %q, want pass %v with %q", r.Pass, r.Detail, r.Why, c.pass, c.want)
			}
		})
	}
}
