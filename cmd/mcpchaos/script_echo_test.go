package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpchaos/mcpchaos/redact"
)

// echomode VAR MODE: an MCP server that echoes the request's Authorization header back through
// one path (TestSecretsNeverLeave's echoServer and its modes), its URL in VAR.
func cmdEchoMode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: echomode VAR MODE (one of %v)", echoModes)
	}
	if !strings.Contains(" "+strings.Join(echoModes, " ")+" ", " "+args[1]+" ") {
		ts.Fatalf("echomode: no mode %q (%v)", args[1], echoModes)
	}
	srv := &echoServer{mode: args[1]}
	addr, stop := listenEcho(srv)
	ts.Defer(stop)
	ts.Setenv(args[0], "http://"+addr+"/mcp")
}

// noleak VAR: no file under the script's work directory holds the value of VAR in any
// spelling redact.Encodings lists (save stdout and stderr to files to have them searched),
// and at least one holds redact's mark.
func cmdNoLeak(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: noleak VAR")
	}
	secret := ts.Getenv(args[0])
	if len(secret) < redact.MinLen {
		ts.Fatalf("noleak: $%s is %q, shorter than a secret", args[0], secret)
	}
	files, marked := 0, 0
	err := filepath.WalkDir(ts.Getenv("WORK"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		if strings.Contains(string(data), redact.Mark) {
			marked++
		}
		for name, enc := range redact.Encodings(secret) {
			if i := strings.Index(string(data), enc); i >= 0 {
				ts.Fatalf("%s holds the secret (%s): …%s…", p, name, data[max(0, i-60):min(len(data), i+len(enc)+20)])
			}
		}
		return nil
	})
	ts.Check(err)
	if marked == 0 {
		ts.Fatalf("nothing was redacted in %d files: the echo never reached an output", files)
	}
	ts.Logf("%d files searched, %d with a mark", files, marked)
}

// listenEcho serves s on loopback until stop.
func listenEcho(s *echoServer) (addr string, stop func()) {
	t := &scriptT{}
	addr = serveEcho(t, s)
	return addr, t.cleanup
}

// scriptT is the part of testing.T serveEcho uses, for a script.
type scriptT struct{ cleanups []func() }

func (t *scriptT) Fatal(args ...any) { panic(fmt.Sprint(args...)) }
func (t *scriptT) Cleanup(f func())  { t.cleanups = append(t.cleanups, f) }
func (t *scriptT) cleanup() {
	for _, f := range t.cleanups {
		f()
	}
}
