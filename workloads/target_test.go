package workloads

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const urlBase = `name: t
target:
  url: https://localhost:8443/mcp
  session_ttl: 2s
  headers:
    Authorization: Bearer ${MCP_TOKEN}
    X-Team: chaos
  http_version: "2"
toxiproxy: http://127.0.0.1:8474
phases:
  - name: a
    duration: ttl+1s
    calls: true
groups:
  - name: g
    clients: 1
    policy: probe
    tool: search
`

func TestURLTarget(t *testing.T) {
	w, err := Parse("u.yaml", []byte(urlBase))
	if err != nil {
		t.Fatal(err)
	}
	tg := w.Target
	if tg.Builtin != nil || tg.URL != "https://localhost:8443/mcp" || tg.SessionTTL != 2*time.Second || !tg.HTTP2 ||
		tg.InsecureSkipVerify || tg.CAFile != "" || tg.Where != "u.yaml:3:8" {
		t.Errorf("target = %+v", tg)
	}
	if w.Toxiproxy != "http://127.0.0.1:8474" || w.Duration != 3*time.Second || w.Groups[0].Tool != "search" {
		t.Errorf("toxiproxy %q, duration %s, tool %q", w.Toxiproxy, w.Duration, w.Groups[0].Tool)
	}
	h, err := tg.ExpandHeaders(func(k string) (string, bool) {
		if k == "MCP_TOKEN" {
			return "t0ken", true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	if hh := http.Header(h); hh.Get("Authorization") != "Bearer t0ken" || hh.Get("X-Team") != "chaos" {
		t.Errorf("headers = %v", h)
	}
	_, err = tg.ExpandHeaders(func(string) (string, bool) { return "", false })
	if err == nil || !strings.Contains(err.Error(), "u.yaml:6:20: target.headers.Authorization: environment variable MCP_TOKEN is not set") {
		t.Errorf("missing variable: %v", err)
	}
	// Past MaxSecretBytes once expanded: refused naming the header where it was written.
	_, err = tg.ExpandHeaders(func(string) (string, bool) { return strings.Repeat("s3cr3t", MaxSecretBytes/6), true })
	if err == nil || !strings.Contains(err.Error(), "target.headers.Authorization: the header values come to") || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("a value past the limit once expanded: %v", err)
	}
	_, err = tg.ExpandHeaders(func(string) (string, bool) { return "x\r\nEvil: 1", true })
	if err == nil || strings.Contains(err.Error(), "Evil") {
		t.Errorf("a value with a line break: %v (and the value must not be printed)", err)
	}
}

func TestExpandVars(t *testing.T) {
	env := map[string]string{"A": "1", "B_2": "two"}
	look := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range []struct{ in, want, missing string }{
		{"plain", "plain", ""},
		{"${A}", "1", ""},
		{"x${A}y${B_2}z", "x1ytwoz", ""},
		{"$$${A}", "$1", ""},
		{"cost $5", "cost $5", ""},
		{"${C}", "", "C"},
	} {
		got, missing := expandVars(tc.in, look)
		if got != tc.want || missing != tc.missing {
			t.Errorf("expandVars(%q) = %q, %q; want %q, %q", tc.in, got, missing, tc.want, tc.missing)
		}
	}
}

func TestURLTargetErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "u.yaml")
	tests := []struct {
		name     string
		old, new string
		want     []wantErr
	}{
		{"credentials in the url", "https://localhost:8443/mcp", "https://me:pw@localhost:8443/mcp", []wantErr{
			{3, 8, "target.url", "https", []string{"carries credentials; put them in a header"}}}},
		{"no host", "https://localhost:8443/mcp", "https:///mcp", []wantErr{
			{3, 8, "target.url", "https", []string{"has no host"}}}},
		{"builtin and url", "  session_ttl: 2s\n", "  session_ttl: 2s\n  builtin: {session_ttl: 1s}\n", []wantErr{
			{3, 3, "target.url", "url", []string{"either builtin or a url, not both"}}}},
		{"a managed header", "    X-Team: chaos\n", "    Host: evil.example\n", []wantErr{
			{7, 5, "target.headers.Host", "Host", []string{"set by mcpchaos itself"}}}},
		{"a bad variable", "    X-Team: chaos\n", "    X-Team: ${1TEAM}\n", []wantErr{
			{7, 13, "target.headers.X-Team", "${1TEAM}", []string{"a variable name is letters"}}}},
		{"an unclosed variable", "    X-Team: chaos\n", "    X-Team: \"${TEAM\"\n", []wantErr{
			{7, 13, "target.headers.X-Team", `"${TEAM`, []string{"is not closed"}}}},
		{"ttl without a declared ttl", "  session_ttl: 2s\n", "", []wantErr{
			{11, 15, "phases[0].duration", "ttl+1s", []string{"waits for the session TTL, but target.session_ttl is not declared"}}}},
		{"header values past the limit", "    X-Team: chaos\n", "    X-Team: " + strings.Repeat("t", MaxSecretBytes-20) + "\n    X-More: " + strings.Repeat("m", 30) + "\n", []wantErr{
			{8, 13, "target.headers.X-More", "mmm", []string{"the header values come to 65565 bytes or more, past the limit of 65536 (64 KiB)"}}}},
		{"a url whose password holds a '?'", "https://localhost:8443/mcp", "https://me:1234?pw@localhost:8443/mcp", []wantErr{
			{3, 8, "target.url", "https", []string{"carries credentials; put them in a header"}}}},
		{"a missing CA file", "  http_version: \"2\"\n", "  ca_file: nowhere.pem\n", []wantErr{
			{8, 12, "target.ca_file", "nowhere.pem", []string{"cannot read nowhere.pem: no such file or directory"}}}},
		{"an HTTP version it does not speak", `http_version: "2"`, `http_version: "3"`, []wantErr{
			{8, 17, "target.http_version", `"3"`, []string{`unknown HTTP version "3"; use "1.1" or "2"`}}}},
		{"a toxiproxy URL with a path", "toxiproxy: http://127.0.0.1:8474", "toxiproxy: http://127.0.0.1:8474/proxies", []wantErr{
			{9, 12, "toxiproxy", "http", []string{"give only those"}}}},
		{"url-only keys on a builtin target", "  url: https://localhost:8443/mcp\n", "  builtin: {session_ttl: 1s}\n", []wantErr{
			{4, 3, "target.session_ttl", "session_ttl", []string{"for the built-in server write it under target.builtin"}},
			{5, 3, "target.headers", "headers", []string{"it belongs to a url target"}},
			{8, 3, "target.http_version", "http_version", []string{"it belongs to a url target"}},
			{18, 11, "groups[0].tool", "search", []string{"unknown value \"search\"; use one of echo, slow"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Count(urlBase, tt.old) != 1 {
				t.Fatalf("%q occurs %d times", tt.old, strings.Count(urlBase, tt.old))
			}
			src := strings.Replace(urlBase, tt.old, tt.new, 1)
			os.WriteFile(file, []byte(src), 0o600)
			_, err := Load(file)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Load: %v, want a *ValidationError", err)
			}
			if len(ve.Errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(ve.Errs), len(tt.want), err)
			}
			lines := strings.Split(src, "\n")
			for i, want := range tt.want {
				got := ve.Errs[i]
				if got.Line != want.line || got.Col != want.col || got.Field != want.field {
					t.Errorf("error %d at %d:%d field %q, want %d:%d field %q\n%v", i, got.Line, got.Col, got.Field, want.line, want.col, want.field, got)
				}
				if !strings.HasPrefix(textAt(lines, got.Line, got.Col), want.at) {
					t.Errorf("error %d points at %q, want %q", i, textAt(lines, got.Line, got.Col), want.at)
				}
				for _, m := range want.msg {
					if !strings.Contains(got.Msg, m) {
						t.Errorf("error %d: %q does not contain %q", i, got.Msg, m)
					}
				}
			}
		})
	}
}

func TestWithTarget(t *testing.T) {
	w, err := Builtin("seed-incident-fast")
	if err != nil {
		t.Fatal(err)
	}
	url := Target{URL: "http://127.0.0.1:9/mcp", SessionTTL: 4 * time.Second}
	w2, err := w.WithTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	// active 1s, quiet ttl+3.5s, after-ttl 2.5s
	if w2.Phases[1].Duration != 7500*time.Millisecond || w2.Phases[2].Start != 8500*time.Millisecond || w2.Duration != 11*time.Second {
		t.Errorf("phases re-timed to %+v, run %s", w2.Phases, w2.Duration)
	}
	if w.Duration != 10*time.Second || w.Target.Builtin == nil {
		t.Error("WithTarget changed the original")
	}
	if _, err := w.WithTarget(Target{URL: url.URL}); err == nil || !strings.Contains(err.Error(), "phase quiet lasts \"ttl+3.5s\", which needs the target's session TTL") {
		t.Errorf("no TTL: %v", err)
	}
	u, err := Parse("u.yaml", []byte(urlBase+"faults:\n  - {toxic: down, at: 2500ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.WithTarget(Target{URL: url.URL, SessionTTL: 500 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "u.yaml:20:13: fault down-0 (at 2.5s, for 0s) no longer fits in the run, which lasts 1.5s") {
		t.Errorf("a run too short for its faults: %v", err)
	}
}

// session_ttl: none declares a server whose sessions never expire: "ttl" in a phase counts 0,
// the phase lasting its offset; the workload still says it waits for the TTL.
func TestSessionTTLNone(t *testing.T) {
	w, err := Parse("u.yaml", []byte(strings.Replace(urlBase, "session_ttl: 2s", "session_ttl: none", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if !w.Target.NoSessionTTL || w.Target.SessionTTL != 0 || w.Phases[0].Duration != time.Second {
		t.Errorf("target %+v, phase %+v", w.Target, w.Phases[0])
	}
	if w.WaitsForTTL() != "a" || w.Groups[0].ToolWhere != "u.yaml:18:11" {
		t.Errorf("WaitsForTTL %q, ToolWhere %q", w.WaitsForTTL(), w.Groups[0].ToolWhere)
	}
	// --session-ttl none on a workload that declared a TTL: the phases are laid out again.
	w2, err := Parse("u.yaml", []byte(urlBase))
	if err != nil {
		t.Fatal(err)
	}
	tg := w2.Target
	tg.SessionTTL, tg.NoSessionTTL = 0, true
	w3, err := w2.WithTarget(tg)
	if err != nil || w3.Phases[0].Duration != time.Second {
		t.Errorf("WithTarget(none): %v %+v", err, w3)
	}
	tg.NoSessionTTL = false
	if _, err := w2.WithTarget(tg); err == nil || !strings.Contains(err.Error(), "--session-ttl none") {
		t.Errorf("WithTarget without a TTL: %v", err)
	}
}
