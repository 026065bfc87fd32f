package workloads

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// base is a minimal valid workload; each error case edits one part of it,
// so that the positions in the expectations can be read off this text.
const base = `name: t
target:
  builtin:
    session_ttl: 3s
phases:
  - name: a
    duration: 1s
    calls: true
groups:
  - name: g
    clients: 1
    policy: naive
faults:
  - toxic: latency
    attributes:
      latency: 10
    at: 500ms
`

// edit replaces the one occurrence of old in base with new.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if strings.Count(base, old) != 1 {
		t.Fatalf("edit: %q occurs %d times in base", old, strings.Count(base, old))
	}
	return strings.Replace(base, old, new, 1)
}

type wantErr struct {
	line, col int
	field     string
	at        string   // the source text expected at line:col
	msg       []string // substrings of Msg
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		old  string // edit base: replace old with new; old "" means src is the whole file
		new  string
		want []wantErr
	}{
		{"misspelt key", "    policy: naive\n", "    policy: naive\n    retires: 2\n", []wantErr{
			{13, 5, "groups[0].retires", "retires", []string{`unknown key "retires"`, `did you mean "retries"?`,
				"allowed keys here: name, clients, ramp, policy, retries, retry_backoff, probe, dead_statuses, call_every, tool, concurrency, request_timeout, protocol"}},
		}},
		{"misspelt top-level key", "name: t\n", "name: t\ndescripton: x\n", []wantErr{
			{2, 1, "descripton", "descripton", []string{`unknown key "descripton"`, `did you mean "description"?`, "allowed keys here: name, description, target, phases, groups, faults"}},
		}},
		{"misspelt nested key", "    session_ttl: 3s\n", "    session_ttl: 3s\n    sessionTTL: 3s\n", []wantErr{
			{5, 5, "target.builtin.sessionTTL", "sessionTTL", []string{`did you mean "session_ttl"?`}},
		}},
		{"duplicate key", "    clients: 1\n", "    clients: 1\n    clients: 2\n", []wantErr{
			{12, 5, "groups[0].clients", "clients: 2", []string{`duplicate key "clients" (first at 11:5)`}},
		}},
		{"call_every a nanosecond", "    policy: naive\n", "    policy: naive\n    call_every: 1ns\n", []wantErr{
			{13, 17, "groups[0].call_every", "1ns", []string{"1ns is shorter than 1ms"}},
		}},
		{"notify_interval a microsecond", "    session_ttl: 3s\n", "    session_ttl: 3s\n    notify_interval: 1us\n", []wantErr{
			{5, 22, "target.builtin.notify_interval", "1us", []string{"shorter than 10ms (or 0 for none)"}},
		}},
		{"negative count", "    clients: 1\n", "    clients: -5\n", []wantErr{
			{11, 14, "groups[0].clients", "-5", []string{"must be at least 1, got -5; set how many simulated clients this group runs"}},
		}},
		{"count too large", "    clients: 1\n", "    clients: 100001\n", []wantErr{
			{11, 14, "groups[0].clients", "100001", []string{"must be at most 100000, got 100001"}},
		}},
		{"count not a number", "    clients: 1\n", "    clients: many\n", []wantErr{
			{11, 14, "groups[0].clients", "many", []string{`must be a whole number, got the string "many"`}},
		}},
		{"count fractional", "    clients: 1\n", "    clients: 2.5\n", []wantErr{
			{11, 14, "groups[0].clients", "2.5", []string{"must be a whole number, got 2.5"}},
		}},
		{"count overflows", "    clients: 1\n", "    clients: 99999999999999999999\n", []wantErr{
			{11, 14, "groups[0].clients", "999", []string{"is too large"}},
		}},
		{"duration without unit", "    duration: 1s\n", "    duration: 30\n", []wantErr{
			{7, 15, "phases[0].duration", "30", []string{"got the bare number 30; add a unit, e.g. 500ms"}},
		}},
		{"quoted duration without unit", "    session_ttl: 3s\n", "    session_ttl: \"3\"\n", []wantErr{
			{4, 18, "target.builtin.session_ttl", `"3"`, []string{"add a unit, e.g. 500ms"}},
		}},
		{"duration nonsense", "    duration: 1s\n", "    duration: 1 sec\n", []wantErr{
			{7, 15, "phases[0].duration", "1 sec", []string{`"1 sec" is not a duration; write a number and a unit`}},
		}},
		{"duration zero", "    session_ttl: 3s\n", "    session_ttl: 0s\n", []wantErr{
			{4, 18, "target.builtin.session_ttl", "0s", []string{"must be greater than 0, got 0s"}},
		}},
		{"duration negative", "    clients: 1\n", "    clients: 1\n    ramp: -1s\n", []wantErr{
			{12, 11, "groups[0].ramp", "-1s", []string{"must not be negative, got -1s"}},
		}},
		{"duration too long", "    duration: 1s\n", "    duration: 100000h\n", []wantErr{
			{7, 15, "phases[0].duration", "100000h", []string{"longer than 720h"}},
		}},
		{"missing required", "    session_ttl: 3s\n", "    retention: 3s\n", []wantErr{
			{4, 5, "target.builtin.session_ttl", "retention", []string{"missing; set how long the server keeps a session"}},
		}},
		{"required without value", "    calls: true\n", "    calls:\n", []wantErr{
			{8, 5, "phases[0].calls", "calls", []string{"has no value; set calls: true"}},
		}},
		{"bool as yes", "    calls: true\n", "    calls: yes\n", []wantErr{
			{8, 12, "phases[0].calls", "yes", []string{`must be true or false, got the string "yes"`}},
		}},
		{"wrong section type", "phases:\n  - name: a\n    duration: 1s\n    calls: true\n", "phases: 1s\n", []wantErr{
			{5, 9, "phases", "1s", []string{"must be a list"}},
		}},
		{"ttl expression resolves negative", "    duration: 1s\n", "    duration: ttl-5s\n", []wantErr{
			{7, 15, "phases[0].duration", "ttl-5s", []string{`"ttl-5s" comes to -2s with session_ttl 3s`}},
		}},
		{"ttl expression malformed", "    duration: 1s\n", "    duration: ttl*2\n", []wantErr{
			{7, 15, "phases[0].duration", "ttl*2", []string{"write ttl, ttl+DURATION or ttl-DURATION"}},
		}},
		{"ttl expression offset without unit", "    duration: 1s\n", "    duration: ttl+2\n", []wantErr{
			{7, 15, "phases[0].duration", "ttl+2", []string{"add a unit, e.g. 500ms"}},
		}},
		{"ttl outside phases", "    at: 500ms\n", "    at: ttl\n", []wantErr{
			{17, 9, "faults[0].at", "ttl", []string{"ttl expressions are only allowed in phases[].duration"}},
		}},
		{"unknown toxic", "  - toxic: latency\n", "  - toxic: latncy\n", []wantErr{
			{14, 12, "faults[0].toxic", "latncy", []string{`unknown toxic "latncy"; did you mean "latency"?`, "use one of idle_timeout, latency,"}},
		}},
		{"unknown toxic attribute", "      latency: 10\n", "      latency: 10\n      jiter: 5\n", []wantErr{
			{17, 7, "faults[0].attributes.jiter", "jiter", []string{"is not an attribute of latency"}},
		}},
		{"bad toxic attribute value", "      latency: 10\n", "      latency: -1\n", []wantErr{
			{16, 7, "faults[0].attributes.latency", "latency", []string{"got -1"}},
		}},
		{"missing toxic attribute", "  - toxic: latency\n    attributes:\n      latency: 10\n", "  - toxic: idle_timeout\n", []wantErr{
			{14, 12, "faults[0].attributes.timeout", "idle_timeout", []string{"is required for idle_timeout", "; add it under attributes"}},
		}},
		{"unknown group in fault", "    at: 500ms\n", "    at: 500ms\n    groups: [g, h]\n", []wantErr{
			{18, 17, "faults[0].groups[1]", "h]", []string{`unknown group "h"; name one of the groups: g`}},
		}},
		{"fault starts past the end", "    at: 500ms\n", "    at: 2s\n", []wantErr{
			{17, 9, "faults[0].at", "2s", []string{"2s is at or after the end of the run (1s)"}},
		}},
		{"fault ends past the end", "    at: 500ms\n", "    at: 500ms\n    for: 1s\n", []wantErr{
			{18, 10, "faults[0].for", "1s", []string{"would end at 1.5s (at 500ms + for 1s), after the run ends at 1s; shorten for to at most 500ms"}},
		}},
		{"overlapping downs", "  - toxic: latency\n    attributes:\n      latency: 10\n    at: 500ms\n",
			"  - toxic: down\n    at: 100ms\n    for: 500ms\n  - toxic: down\n    at: 200ms\n", []wantErr{
				{18, 9, "faults[1].at", "200ms", []string{`overlaps down fault "down-0" (100ms to 600ms) on group "g"`}},
			}},
		{"duplicate fault name", "    at: 500ms\n", "    at: 500ms\n  - toxic: latency\n    name: latency-0\n", []wantErr{
			{19, 11, "faults[1].name", "latency-0", []string{`duplicate fault name "latency-0"`}},
		}},
		{"bad policy", "    policy: naive\n", "    policy: smart\n", []wantErr{
			{12, 13, "groups[0].policy", "smart", []string{`unknown value "smart"; use one of naive, probe`}},
		}},
		{"missing policy", "    policy: naive\n", "", []wantErr{
			{10, 5, "groups[0].policy", "name: g", []string{"missing; set what a client does after a drop: naive or probe"}},
		}},
		{"bad status", "    session_ttl: 3s\n", "    session_ttl: 3s\n    dead_status: 600\n", []wantErr{
			{5, 18, "target.builtin.dead_status", "600", []string{"must be at most 599, got 600"}},
		}},
		{"bad status in list", "    policy: naive\n", "    policy: naive\n    dead_statuses: [404, 99, 404]\n", []wantErr{
			{13, 26, "groups[0].dead_statuses[1]", "99", []string{"must be at least 100, got 99"}},
			{13, 30, "groups[0].dead_statuses[2]", "404]", []string{"404 is listed twice"}},
		}},
		{"bad unknown cursor status", "    session_ttl: 3s\n", "    session_ttl: 3s\n    unknown_cursor_status: -2\n", []wantErr{
			{5, 28, "target.builtin.unknown_cursor_status", "-2", []string{"or -1, got -2"}},
		}},
		{"retry not whole milliseconds", "    session_ttl: 3s\n", "    session_ttl: 3s\n    retry: 1500us\n", []wantErr{
			{5, 12, "target.builtin.retry", "1500us", []string{"not a whole number of milliseconds", "e.g. 2ms"}},
		}},
		{"bad enum with suggestion", "    session_ttl: 3s\n", "    session_ttl: 3s\n    get_validation: Strict\n", []wantErr{
			{5, 21, "target.builtin.get_validation", "Strict", []string{`did you mean "strict"?`}},
		}},
		{"bad ttl mode", "    session_ttl: 3s\n", "    session_ttl: 3s\n    ttl_mode: fixed\n", []wantErr{
			{5, 15, "target.builtin.ttl_mode", "fixed", []string{`unknown value "fixed"; use one of sliding, absolute`}},
		}},
		{"bad era", "    session_ttl: 3s\n", "    session_ttl: 3s\n    era: 2026-07-28\n", []wantErr{
			{5, 10, "target.builtin.era", "2026-07-28", []string{`unknown value "2026-07-28"; use one of both, session, stateless`}},
		}},
		{"bad name", "name: t\n", "name: Seed Incident\n", []wantErr{
			{1, 7, "name", "Seed", []string{`may only contain lowercase letters, digits, - and _; rename it, e.g. "seed-incident"`}},
		}},
		{"duplicate group", "    policy: naive\n", "    policy: naive\n  - name: g\n    clients: 1\n    policy: probe\n", []wantErr{
			{13, 11, "groups[1].name", "g\n", []string{`duplicate group name "g" (first at 10:11)`}},
		}},
		{"reserved group name", "  - name: g\n", "  - name: steady_state\n", []wantErr{
			{10, 11, "groups[0].name", "steady_state", []string{`"steady_state" is reserved`, "name the group otherwise"}},
		}},
		{"ramp longer than run", "    clients: 1\n", "    clients: 1\n    ramp: 2s\n", []wantErr{
			{12, 11, "groups[0].ramp", "2s", []string{"longer than the whole run (1s)"}},
		}},
		{"url target with a scheme it cannot speak", "  builtin:\n    session_ttl: 3s\n", "  url: ftp://localhost:8080/mcp\n", []wantErr{
			{3, 8, "target.url", "ftp:", []string{"the scheme must be http or https"}},
		}},
		{"yaml syntax error", "    clients: 1\n", "    clients: [1\n", []wantErr{
			{12, 5, "", "policy", []string{"YAML syntax error", "',' or ']' must be specified"}},
		}},
		{"yaml unclosed quote", "name: t\n", "name: \"t\n", []wantErr{
			{1, 7, "", `"t`, []string{"YAML syntax error", "could not find end character of double-quoted text"}},
		}},
		{"tab indentation", "    clients: 1\n", "\tclients: 1\n", []wantErr{
			{11, 1, "", "\t", []string{"YAML syntax error", "indent with spaces"}},
		}},
		{"second document", "    at: 500ms\n", "    at: 500ms\n---\nname: u\n", []wantErr{
			{18, 1, "", "---", []string{"a second YAML document starts here"}},
		}},
		{"unknown alias", "    clients: 1\n", "    clients: *n\n", []wantErr{
			{11, 14, "groups[0].clients", "*n", []string{"alias *n names no anchor defined before it"}},
		}},
		{"every error of a file", "    clients: 1\n    policy: naive\n", "    clients: 0\n    policy: smart\n    tool: hammer\n", []wantErr{
			{11, 14, "groups[0].clients", "0", []string{"must be at least 1, got 0"}},
			{12, 13, "groups[0].policy", "smart", []string{`unknown value "smart"`}},
			{13, 11, "groups[0].tool", "hammer", []string{`unknown value "hammer"; use one of echo, slow`}},
		}},
		{"empty file", "", "", []wantErr{
			{1, 1, "", "", []string{"file is empty"}},
		}},
		{"not a mapping", "", "- a\n", []wantErr{
			{1, 1, "", "- a", []string{"the file must be a mapping", "got a list"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := tt.new
			if tt.old != "" {
				src = edit(t, tt.old, tt.new)
			}
			w, err := Parse("seed.yaml", []byte(src))
			if err == nil {
				t.Fatalf("Parse succeeded (%+v); want errors", w)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error is %T, want *ValidationError: %v", err, err)
			}
			if len(ve.Errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(ve.Errs), len(tt.want), err)
			}
			lines := strings.Split(src, "\n")
			for i, want := range tt.want {
				got := ve.Errs[i]
				if got.File != "seed.yaml" || got.Line != want.line || got.Col != want.col || got.Field != want.field {
					t.Errorf("error %d at %s:%d:%d field %q, want seed.yaml:%d:%d field %q\n%v",
						i, got.File, got.Line, got.Col, got.Field, want.line, want.col, want.field, got)
				}
				if want.at != "" && !strings.HasPrefix(textAt(lines, got.Line, got.Col), want.at) {
					t.Errorf("error %d points at %q, want %q", i, textAt(lines, got.Line, got.Col), want.at)
				}
				for _, m := range want.msg {
					if !strings.Contains(got.Msg, m) {
						t.Errorf("error %d message %q lacks %q", i, got.Msg, m)
					}
				}
				if !strings.Contains(got.Msg, "; ") {
					t.Errorf("error %d message %q does not say what to do after a semicolon", i, got.Msg)
				}
			}
		})
	}
}

// textAt is the rest of the line from a 1-based column (counted in runes).
func textAt(lines []string, line, col int) string {
	if line < 1 || line > len(lines) {
		return ""
	}
	r := []rune(lines[line-1] + "\n")
	if col < 1 || col > len(r) {
		return ""
	}
	return string(r[col-1:])
}

func TestErrorFormat(t *testing.T) {
	_, err := Parse("seed.yaml", []byte(edit(t, "    clients: 1\n", "    clients: -5\n")))
	want := "seed.yaml:11:14: groups[0].clients: must be at least 1, got -5; set how many simulated clients this group runs"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	two := &ValidationError{Errs: []*Error{
		{File: "f", Line: 1, Col: 2, Field: "a", Msg: "x; y"},
		{File: "f", Line: 3, Col: 4, Msg: "syntax; fix"},
	}}
	if got := two.Error(); got != "f:1:2: a: x; y\nf:3:4: syntax; fix" {
		t.Fatalf("ValidationError.Error() = %q", got)
	}
}

func TestDefaults(t *testing.T) {
	w, err := Parse("seed.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	b := w.Target.Builtin
	wantB := BuiltinTarget{
		SessionTTL: 3 * time.Second, Retention: 6 * time.Second, RetentionEvents: 1024,
		GetValidation: "permissive", DeadStatus: 404, DeadBody: `{"error":"session expired"}`,
		UnknownCursorStatus: 400, NotifyInterval: time.Second, PostResponse: "sse",
		Replicas: 1, Routing: "sticky", EventLog: "per-replica",
	}
	if *b != wantB {
		t.Errorf("builtin = %+v\nwant %+v", *b, wantB)
	}
	if w.Target.SessionTTL != 3*time.Second || w.Target.URL != "" {
		t.Errorf("target = %+v", w.Target)
	}
	g := w.Groups[0]
	if g.Retries != 3 || g.RetryBackoff != 50*time.Millisecond || g.Probe != "ping" ||
		fmt.Sprint(g.DeadStatuses) != "[404 410]" || g.CallEvery != time.Second || g.Tool != "echo" ||
		g.Concurrency != 2 || g.RequestTimeout != 10*time.Second || g.Protocol != "2025-11-25" || g.Ramp != 0 {
		t.Errorf("group defaults = %+v", g)
	}
	f := w.Faults[0]
	if f.Name != "latency-0" || f.Stream != "downstream" || len(f.Groups) != 0 || f.For != 0 ||
		f.Until(w.Duration) != w.Duration || !f.AppliesTo("g") {
		t.Errorf("fault defaults = %+v", f)
	}
	if w.Source != "seed.yaml" || !strings.HasPrefix(w.Hash, "sha256:") || len(w.Hash) != len("sha256:")+64 {
		t.Errorf("source %q hash %q", w.Source, w.Hash)
	}
}

func TestPhasesResolveTTL(t *testing.T) {
	src := edit(t, "    calls: true\n", "    calls: true\n  - duration: ttl+1.5s\n    calls: false\n  - name: last\n    duration: ttl - 500ms\n    calls: true\n  - duration: ttl\n    calls: true\n")
	w, err := Parse("seed.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Phase{
		{"a", 0, time.Second, true},
		{"phase-1", time.Second, 4500 * time.Millisecond, false},
		{"last", 5500 * time.Millisecond, 2500 * time.Millisecond, true},
		{"phase-3", 8 * time.Second, 3 * time.Second, true},
	}
	if fmt.Sprint(w.Phases) != fmt.Sprint(want) {
		t.Fatalf("phases = %+v\nwant %+v", w.Phases, want)
	}
	if w.Duration != 11*time.Second || w.Phases[3].End() != w.Duration {
		t.Fatalf("duration = %s", w.Duration)
	}
}

// Anchors in x- keys and merges let groups share settings.
func TestAnchorsAndMerges(t *testing.T) {
	src := edit(t, "groups:\n  - name: g\n    clients: 1\n    policy: naive\n",
		"x-common: &common\n  clients: 7\n  call_every: 400ms\n  policy: naive\ngroups:\n  - <<: *common\n    name: g\n  - <<: *common\n    name: p\n    policy: probe\n")
	w, err := Parse("seed.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Groups) != 2 {
		t.Fatalf("groups = %+v", w.Groups)
	}
	for i, want := range []string{"naive", "probe"} {
		g := w.Groups[i]
		if g.Clients != 7 || g.CallEvery != 400*time.Millisecond || g.Policy != want {
			t.Errorf("group %d = %+v", i, g)
		}
	}
}

func TestAliasCycle(t *testing.T) {
	_, err := Parse("seed.yaml", []byte("name: t\ntarget: &t {builtin: *t}\n"))
	if err == nil || !strings.Contains(err.Error(), "seed.yaml:2:22: target.builtin: alias *t is inside the node anchored as &t") {
		t.Fatalf("got %v", err)
	}
}

// The Go API refuses what a file would: a loop's duration under its lower bound.
func TestValidateLoopBounds(t *testing.T) {
	w, err := Parse("t.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	w.Groups[0].CallEvery = time.Nanosecond
	w.Target.Builtin.NotifyInterval = time.Microsecond
	err = w.Validate()
	if err == nil || !strings.Contains(err.Error(), "groups[0].call_every: 1ns is shorter than 1ms") || !strings.Contains(err.Error(), "target.builtin.notify_interval: 1µs is shorter than 10ms") {
		t.Errorf("Validate: %v", err)
	}
}
