package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/hostile"
	"github.com/mcpchaos/mcpchaos/results"
)

// hostileCauses are the 17 hostile behaviours of issue 20, each a path of the hostile server,
// with the words that `run` and `inspect` must say of it in their first problem line.
// docs/reliability.md's table is checked against this one (TestReliabilityTableMatches).
var hostileCauses = []struct {
	behaviour, path string
	run, inspect    string
}{
	{"huge SSE event", "giant-event", "sent an SSE event larger than mcpchaos reads", "sent an SSE event larger than mcpchaos reads"},
	{"endless SSE line", "endless-line", "sent an SSE event larger than mcpchaos reads", "sent an SSE event larger than mcpchaos reads"},
	{"slowloris headers", "trickle-headers", "slowloris headers: the server began its response", "slowloris headers: the server began its response"},
	{"no response", "never-answered", "no response: the server took the request and sent no status line", "no response: the server took the request and sent no status line"},
	{"wrong Content-Type", "html", `content type "text/html"`, `content type "text/html"`},
	{"garbage (not JSON)", "not-json", "the server broke the protocol", "this is not JSON"},
	{"invalid JSON-RPC (wrong id)", "wrong-id", "the server broke the protocol", "987654"},
	{"status storm", "storm-500", "(a status storm)", "(a status storm)"},
	{"off-site redirect", "redirect-off-origin", "redirect refused: to another origin", "redirect refused: to another origin"},
	{"gzip bomb", "gzip-bomb", "the server sent a gzip body", "the server sent a gzip body"},
	{"reset mid-event", "reset-mid-event", "reset the connection in the middle of an SSE event", "reset the connection in the middle of an SSE event"},
	{"garbage session id", "huge-session-id", "bad session id: 8192 bytes long", "bad session id: 8192 bytes long"},
	{"chaotic event ids", "event-ids", "gave chaotic SSE event ids", "gave chaotic SSE event ids"},
	{"huge retry:", "absurd-retry", "asked clients to wait an absurd time before reconnecting", "asked clients to wait an absurd time before reconnecting"},
	{"405 on GET", "get-405", "refused the GET stream with HTTP 405", "refused the GET stream with HTTP 405"},
	{"409 on GET", "get-409", "answered the GET stream with HTTP 409", "answered the GET stream with HTTP 409"},
	{"huge header block", "huge-header", "server response headers exceeded", "server response headers exceeded"},
}

// garbageModes answer with what is not a reply at all: inspect must draw no hazard about
// sessions or replays from them.
var garbageModes = map[string]bool{"html": true, "not-json": true, "wrong-id": true, "gzip-bomb": true, "event-ids": true}

// Against each hostile behaviour, `run` and `inspect` name what the server did in their first
// problem line (a `problem:` line, or the error that stopped them), and inspect draws no hazard
// about sessions or replays from garbage.
func TestHostileCausesNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcpchaos 34 times")
	}
	h := hostile.New(t)
	for _, c := range hostileCauses {
		t.Run(c.path, func(t *testing.T) {
			dir := t.TempDir()
			workload := "hostile.yaml"
			if c.path == "get-405" { // no GET stream is a problem only for a run whose faults cut streams
				workload = "hostile-cut.yaml"
			}
			out := runCmd(t, dir, "run", filepath.Join("testdata", workload), "--target", h.URL(c.path), "--progress", "off", "--out", filepath.Join(dir, "r.json"))
			exp, err := results.ReadFile(filepath.Join(dir, "r.json"))
			if err != nil {
				t.Fatalf("no export: %v", err)
			}
			first := firstProblem(out, "could not start")
			switch starved := starvedRun(exp); {
			case strings.Contains(first, c.run):
			case starved != "" && strings.Contains(out, c.run): // timeouts may come first on a starved runner
				t.Logf("the run was starved (%s): the cause is named, not first: %q", starved, first)
			case starved != "": // its clients timed out before the server's conduct reached them
				t.Logf("inconclusive: the run was starved (%s) and its clients never met the conduct: %q", starved, first)
			default:
				t.Errorf("run's first problem line %q does not say %q", first, c.run)
			}
			out = runCmd(t, dir, "inspect", h.URL(c.path), "--idle", "1s", "--timeout", "3s")
			if first := firstProblem(out, "could not inspect"); !strings.Contains(first, c.inspect) {
				t.Errorf("inspect's first problem line %q does not say %q", first, c.inspect)
			}
			if garbageModes[c.path] {
				for _, hz := range []string{"replay_lies", "cross_session_replay", "nonstandard_dead_status", "no_keepalive"} {
					if strings.Contains(out, "  - "+hz+":") {
						t.Errorf("inspect drew %s from garbage", hz)
					}
				}
			}
		})
	}
}

// starvedRun says why the run's own generator found it starved, "" when it was not.
func starvedRun(exp *results.Export) string {
	if exp.Generator == nil {
		return ""
	}
	return exp.Generator.Why()
}

// firstProblem is the first `problem:` line of out, or else its first line saying stopped
// (the error that ended the command).
func firstProblem(out, stopped string) string {
	lines := strings.Split(out, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "problem: ") {
			return l
		}
	}
	for _, l := range lines {
		if strings.Contains(l, stopped) {
			return l
		}
	}
	return ""
}

// The table of hostile behaviours in docs/reliability.md is the one TestHostileCausesNamed
// checks, row for row.
func TestReliabilityTableMatches(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "reliability.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "| ") && strings.Count(l, " | `") >= 3 && strings.Contains(l, "` | `") {
			rows = append(rows, l)
		}
	}
	cell := func(s string) string { return "`" + strings.ReplaceAll(s, "|", `\|`) + "`" }
	want := map[string]bool{}
	for _, c := range hostileCauses {
		want[fmt.Sprintf("| %s | `%s` | %s | %s |", c.behaviour, c.path, cell(c.run), cell(c.inspect))] = true
	}
	got := map[string]bool{}
	for _, r := range rows {
		if strings.Contains(r, "` | `") && strings.Count(r, "|") == 5 {
			got[r] = true
		}
	}
	for r := range want {
		if !got[r] {
			t.Errorf("docs/reliability.md lacks the row\n%s", r)
		}
	}
	for r := range got {
		if !want[r] {
			t.Errorf("docs/reliability.md has a row no test checks\n%s", r)
		}
	}
}

// A group that makes no call though calls were due is a `problem:` and a non-zero exit, never
// a quiet 0 / 0: the server gives the run's preflight a session, then refuses every client's
// initialize.
func TestNoCallMadeIsAProblem(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of 1.5 s")
	}
	h := hostile.New(t)
	for _, c := range []struct{ path, says string }{
		{"one-session", "no session was ever established"},
	} {
		t.Run(c.path, func(t *testing.T) {
			dir := t.TempDir()
			var stdout, stderr lockedBuffer
			root := newRoot()
			root.SetArgs([]string{"run", filepath.Join("testdata", "hostile.yaml"), "--target", h.URL(c.path), "--progress", "off", "--out", filepath.Join(dir, "r.json")})
			root.SetOut(&stdout)
			root.SetErr(&stderr)
			err := root.ExecuteContext(t.Context())
			t.Logf("%s%s", stdout.String(), stderr.String())
			if code := exitCode(err); code == 0 {
				t.Errorf("exit status 0 for a run that made no call")
			}
			if !strings.Contains(stdout.String(), "problem: ") || !strings.Contains(stdout.String(), c.says) {
				t.Errorf("no problem line says %q", c.says)
			}
		})
	}
}
