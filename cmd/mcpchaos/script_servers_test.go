package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpchaos/mcpchaos/faults/toxiproxytest"
	"github.com/mcpchaos/mcpchaos/refserver"
	"github.com/mcpchaos/mcpchaos/results"
)

// refserver VAR [ttl=D] [get=strict] [notify=D] [retry=D]: start the reference server on loopback for
// the rest of the script, its URL in $VAR.
func cmdRefServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: refserver VAR [ttl=D] [get=strict] [notify=D] [retry=D]")
	}
	cfg := refserver.Config{Retention: time.Minute}
	for _, a := range args[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "ttl", "notify", "retry":
			d, err := time.ParseDuration(v)
			if err != nil {
				ts.Fatalf("refserver: %v", err)
			}
			switch k {
			case "ttl":
				cfg.SessionTTL = d
			case "notify":
				cfg.NotifyInterval = d
			default:
				cfg.Retry = d
			}
		case "get":
			cfg.GetValidation = refserver.GetValidation(v)
		default:
			ts.Fatalf("refserver: unknown setting %q", a)
		}
	}
	inst, err := refserver.Start("127.0.0.1:0", cfg.WithDefaults())
	if err != nil {
		ts.Fatalf("refserver: %v", err)
	}
	ts.Defer(func() { inst.Close() })
	ts.Setenv(args[0], inst.URL)
	stoppable(ts, args[0], func() { inst.Close() })
}

// toxiproxy VAR: start a real toxiproxy-server for the rest of the script, its API in $VAR.
// Scripts guard it with [!toxiproxy] skip.
func cmdToxiproxy(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: toxiproxy VAR")
	}
	api, stop, err := toxiproxytest.StartServer()
	if err != nil {
		ts.Fatalf("toxiproxy: %v", err)
	}
	once := sync.OnceFunc(stop)
	ts.Defer(once)
	ts.Setenv(args[0], api)
	stoppable(ts, args[0], once)
}

// stoppers are the servers of scripts that `stopserver VAR` can end mid-script, by script and VAR.
var stoppers sync.Map // stopKey → func()

type stopKey struct {
	ts  *testscript.TestScript
	env string
}

func stoppable(ts *testscript.TestScript, env string, stop func()) {
	stoppers.Store(stopKey{ts, env}, stop)
	ts.Defer(func() { stoppers.Delete(stopKey{ts, env}) })
}

// stopserver VAR: stop the server (refserver, toxiproxy) started for $VAR now, mid-script: a target
// or a toxiproxy-server that dies while a background run goes on.
func cmdStop(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: stopserver VAR")
	}
	f, ok := stoppers.Load(stopKey{ts, args[0]})
	if !ok {
		ts.Fatalf("stopserver: no server started for %s", args[0])
	}
	f.(func())()
}

// tlsserver VAR: an https server on loopback with a self-signed certificate nobody trusts, its
// URL in $VAR.
func cmdTLSServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: tlsserver VAR")
	}
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake errors are the point
	srv.StartTLS()
	ts.Defer(srv.Close)
	ts.Setenv(args[0], srv.URL+"/mcp")
}

// sigint2: send SIGINT to the background commands, then keep sending it (every 2 ms, for 10 s
// at most) until they have exited: the second signal must end a run at once.
func cmdSigint2(ts *testscript.TestScript, neg bool, args []string) {
	// (The same signal within 500 ms counts once, main's repeatWindow: the one that ends the
	// process is one sent past it.)
	if neg || len(args) != 0 {
		ts.Fatalf("usage: sigint2")
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		alive := 0
		for _, c := range ts.BackgroundCmds() {
			if c.Process != nil && running(c.Process.Pid) { // not ProcessState: wait writes it
				alive++
				_ = c.Process.Signal(syscall.SIGINT)
			}
		}
		if alive == 0 {
			return
		}
		time.Sleep(2 * time.Millisecond) // a bounded poll
	}
}

// scriptCondition answers [toxiproxy]: whether a toxiproxy-server binary is there. Under CI it
// is always true, so that a missing binary fails the script instead of skipping it.
func scriptCondition(cond string) (bool, error) {
	if cond != "toxiproxy" {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	if os.Getenv("CI") != "" {
		return true, nil
	}
	_, err := toxiproxytest.Binary()
	return err == nil, nil
}

// proxies API [add NAME... | wait N]: print the names of the proxies on the toxiproxy-server,
// one a line, sorted; with add, first create proxies of those names (as a crashed run leaves
// them); with wait, first wait (10s at most) until there are at least N.
func cmdProxies(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: proxies API [add NAME... | wait N]")
	}
	c := toxiproxy.NewClient(args[0])
	if len(args) == 3 && args[1] == "wait" {
		var n int
		fmt.Sscan(args[2], &n)
		for deadline := time.Now().Add(10 * time.Second); ; {
			all, err := c.Proxies()
			if err == nil && len(all) >= n {
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("proxies: fewer than %d after 10s", n)
			}
			time.Sleep(20 * time.Millisecond) // a bounded poll for a condition
		}
	}
	if len(args) > 2 && args[1] == "add" {
		for _, n := range args[2:] {
			if _, err := c.CreateProxy(n, "127.0.0.1:0", "127.0.0.1:9"); err != nil {
				ts.Fatalf("proxies: %v", err)
			}
		}
	}
	all, err := c.Proxies()
	if err != nil {
		ts.Fatalf("proxies: %v", err)
	}
	var names []string
	for n := range all {
		names = append(names, n)
	}
	slices.Sort(names)
	fmt.Fprintf(ts.Stdout(), "%d proxies\n", len(names)) // always some output, so stdout checks see this command's
	for _, n := range names {
		fmt.Fprintln(ts.Stdout(), n)
	}
}

// sigterm [twice]: send SIGTERM, by PID, to the script's background commands (testscript's
// kill knows only INT and KILL); twice sends a second one straight after, as GNU timeout does
// (to the command, then to its process group).
func cmdSigterm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 || len(args) == 1 && args[0] != "twice" {
		ts.Fatalf("usage: sigterm [twice]")
	}
	for range 1 + len(args) {
		for _, c := range ts.BackgroundCmds() {
			if c.Process != nil && c.ProcessState == nil {
				_ = c.Process.Signal(syscall.SIGTERM)
			}
		}
	}
}

// checkexport FILE: FILE is a whole export of an interrupted run, and none of its proxies
// still accepts connections.
func cmdCheckExport(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: checkexport FILE")
	}
	exp, err := results.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	if !exp.Run.Interrupted {
		ts.Fatalf("%s is not marked interrupted", args[0])
	}
	if len(exp.Run.Proxies) == 0 {
		ts.Fatalf("%s names no proxies", args[0])
	}
	for g, addr := range exp.Run.Proxies {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			ts.Fatalf("group %s: proxy %s still accepts connections", g, addr)
		}
	}
}

// freeaddr VAR: a loopback address with a port free right now, in $VAR.
func cmdFreeAddr(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeaddr VAR")
	}
	addr, err := freePort()
	ts.Check(err)
	ts.Setenv(args[0], addr)
}

// freePort is a loopback address whose port was free a moment ago, for a process started
// later to listen on. It is picked below the kernel's ephemeral range (32768 and up on Linux):
// a port from there (":0") is also what every outgoing connection on the machine takes, and
// on a busy machine one took it before the run could listen ("address already in use").
func freePort() (string, error) {
	for range 50 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		if l, err := net.Listen("tcp", addr); err == nil {
			return addr, l.Close()
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	return l.Addr().String(), l.Close()
}

// waitmetrics URL REGEXP: poll a live metrics endpoint (for up to 60 s) until its body
// matches REGEXP: a way to know a background run has got to a given point. The bound is
// generous: a run's start (the binary under -race, set-up) took more than 20 s on a loaded
// machine, and one scrape may take seconds there; a script that matches early does not wait.
func cmdWaitMetrics(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitmetrics URL REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	hc := &http.Client{Timeout: 10 * time.Second}
	last := "no answer"
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		if resp, err := hc.Get(args[0]); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if re.Match(body) {
				return
			}
			last = string(body)
		} else {
			last = err.Error()
		}
		time.Sleep(20 * time.Millisecond) // a bounded poll
	}
	ts.Logf("last answer: %s", last) // what the run had got to, for the failure's cause
	ts.Fatalf("%s never matched %q", args[0], args[1])
}

// echoserver VAR: a server on loopback, its URL in $VAR, that answers every request 401 with
// the request's Authorization header in the body: a server that reflects a token back.
func cmdEchoServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: echoserver VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unauthorized: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	})}
	go func() { _ = srv.Serve(l) }()
	ts.Defer(func() { _ = srv.Close() })
	ts.Setenv(args[0], "http://"+l.Addr().String()+"/mcp")
}

// nosecret VALUE: no file under the script's work directory contains VALUE.
func cmdNoSecret(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 || args[0] == "" {
		ts.Fatalf("usage: nosecret VALUE")
	}
	n := 0
	err := filepath.WalkDir(ts.Getenv("WORK"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if bytes.Contains(data, []byte(args[0])) {
			ts.Fatalf("%s contains the secret", p)
		}
		return nil
	})
	ts.Check(err)
	ts.Logf("%d files checked", n)
}

// running says whether the process is there and not a zombie (Linux: /proc).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, ok := bytes.Cut(b, []byte(") "))
	return ok && len(after) > 0 && after[0] != 'Z'
}
