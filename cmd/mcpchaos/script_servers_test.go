package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpchaos/mcpchaos/faults/toxiproxytest"
	"github.com/mcpchaos/mcpchaos/target"
)

// refserver VAR [ttl=D] [get=strict] [notify=D]: start the reference server on loopback for
// the rest of the script, its URL in $VAR.
func cmdRefServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: refserver VAR [ttl=D] [get=strict] [notify=D]")
	}
	cfg := target.Config{Retention: time.Minute}
	for _, a := range args[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "ttl", "notify":
			d, err := time.ParseDuration(v)
			if err != nil {
				ts.Fatalf("refserver: %v", err)
			}
			if k == "ttl" {
				cfg.SessionTTL = d
			} else {
				cfg.NotifyInterval = d
			}
		case "get":
			cfg.GetValidation = target.GetValidation(v)
		default:
			ts.Fatalf("refserver: unknown setting %q", a)
		}
	}
	inst, err := target.Start("127.0.0.1:0", cfg.WithDefaults())
	if err != nil {
		ts.Fatalf("refserver: %v", err)
	}
	ts.Defer(func() { inst.Close() })
	ts.Setenv(args[0], inst.URL)
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
	ts.Defer(stop)
	ts.Setenv(args[0], api)
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

// sigterm: send SIGTERM, by PID, to the script's background commands (testscript's kill knows
// only INT and KILL).
func cmdSigterm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: sigterm")
	}
	for _, c := range ts.BackgroundCmds() {
		if c.Process != nil && c.ProcessState == nil {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
	}
}
