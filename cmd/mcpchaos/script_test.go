package main

import (
	"errors"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rs/zerolog"
	zlog "github.com/rs/zerolog/log"
)

// The command line is the tool's contract, so it is tested as scripts: the command, its exit
// status, what it prints (testdata/script/*.txtar).
func TestMain(m *testing.M) {
	// The tests that run the command in this process, not through main: embedded Toxiproxy's
	// bandwidth toxic logs through zerolog's global logger, which main silences.
	zlog.Logger = zerolog.Nop()
	testscript.Main(m, map[string]func(){"mcpchaos": main, "peakrss": peakRSS})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// Servers for scripts (script_servers_test.go): refserver, toxiproxy, proxies.
			"refserver":      cmdRefServer,
			"toxiproxy":      cmdToxiproxy,
			"proxies":        cmdProxies,
			"sigterm":        cmdSigterm,
			"checkexport":    cmdCheckExport,
			"freeaddr":       cmdFreeAddr,
			"waitmetrics":    cmdWaitMetrics,
			"echoserver":     cmdEchoServer,
			"echomode":       cmdEchoMode,
			"noleak":         cmdNoLeak,
			"redirectserver": cmdRedirectServer,
			"nosecret":       cmdNoSecret,
			"stopserver":     cmdStop,
			"tlsserver":      cmdTLSServer,
			"sigint2":        cmdSigint2,
			"secretsizes":    cmdSecretSizes,
			// status N CMD ARGS...: run CMD and require exit status N exactly; N may list
			// several (0,99) where the script must not depend on which.
			"status": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: status N[,N...] command [args...]")
				}
				var wants []int
				for _, w := range strings.Split(args[0], ",") {
					n, err := strconv.Atoi(w)
					if err != nil {
						ts.Fatalf("status: %v", err)
					}
					wants = append(wants, n)
				}
				got := 0
				if err := ts.Exec(args[1], args[2:]...); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						ts.Fatalf("status: %v", err)
					}
					got = ee.ExitCode()
				}
				if !slices.Contains(wants, got) {
					ts.Fatalf("exit status %d, want %s", got, args[0])
				}
			},
		},
		Condition: scriptCondition, // [toxiproxy] (script_servers_test.go)
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir)
			return nil
		},
	})
}
