package workloads

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// steadyBase is a valid workload with every kind of probe and rollback; the error cases edit
// one line of it, so that positions can be read off this text.
const steadyBase = `name: s
target:
  builtin: {session_ttl: 3s}
phases:
  - {name: a, duration: 4s, calls: true}
groups:
  - {name: g, clients: 1, policy: probe}
faults:
  - {name: cut, toxic: idle_timeout, attributes: {timeout: 40}, at: 1s, for: 1s}
steady_state:
  title: healthy
  probes:
    - name: healthz
      when: [before, after]
      http: {url: "{{target}}/healthz", body_contains: ok}
    - name: held
      when: [before, continuously, after]
      every: 1s
      promql: {url: "http://127.0.0.1:9090", query: sum(sessions_held)}
      tolerance: within 10% of before
    - name: check
      when: during
      during: cut
      timeout: 10s
      command: {command: ./check.sh, args: [--quick], env: {TOKEN: "${TOKEN}"}}
      tolerance: value <= 3
rollbacks:
  - name: undo
    exec: {command: ./rollback.sh, timeout: 2m}
    wait_for: {url: "http://127.0.0.1:8080/healthz", timeout: 1m}
  - remove_faults: {faults: [cut]}
  - wait_for: {command: [sh, -c, "exit 0"]}
`

func TestSteadyStateParses(t *testing.T) {
	w, err := Parse("s.yaml", []byte(steadyBase))
	if err != nil {
		t.Fatal(err)
	}
	ss := w.SteadyState
	if ss == nil || ss.Title != "healthy" || len(ss.Probes) != 3 {
		t.Fatalf("steady state %+v", ss)
	}
	h, p, c := ss.Probes[0], ss.Probes[1], ss.Probes[2]
	if h.Kind() != "http" || h.HTTP.Status != 200 || h.Timeout != 5*time.Second || h.Where != "s.yaml:13:7" {
		t.Errorf("http probe %+v (defaults: status 200, timeout 5s)", h)
	}
	if p.Kind() != "promql" || p.Every != time.Second || !p.Runs(SteadyContinuously) || p.Tolerance != "within 10% of before" {
		t.Errorf("promql probe %+v", p)
	}
	if h.Retries != 0 || h.RetryInterval != time.Second {
		t.Errorf("retries %d every %s, want 0 and 1s by default", h.Retries, h.RetryInterval)
	}
	if c.Kind() != "command" || c.During != "cut" || c.Command.MaxOutput != 65536 || c.Command.Env[0].Value != "${TOKEN}" || c.Timeout != 10*time.Second {
		t.Errorf("command probe %+v %+v", c, c.Command)
	}
	rb := w.Rollbacks
	if len(rb) != 3 || rb[0].Name != "undo" || rb[0].Action.Kind != ActionExec || rb[0].Action.WaitFor == nil ||
		rb[1].Name != "remove_faults-1" || rb[1].Faults[0] != "cut" || rb[2].Action.Kind != ActionWaitFor {
		t.Errorf("rollbacks %+v", rb)
	}
	if err := w.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestSteadyStateErrors(t *testing.T) {
	edit := func(old, new string) string {
		if strings.Count(steadyBase, old) != 1 {
			t.Fatalf("edit: %q occurs %d times", old, strings.Count(steadyBase, old))
		}
		return strings.Replace(steadyBase, old, new, 1)
	}
	tests := []struct {
		name string
		src  string
		want wantErr
	}{
		{"unknown when", edit("when: [before, after]", "when: [before, afterwards]"),
			wantErr{14, 22, "steady_state.probes[0].when[1]", "afterwards", []string{`unknown value "afterwards"`, "before, after, continuously, during"}}},
		{"when twice", edit("when: [before, after]", "when: [before, before]"),
			wantErr{14, 22, "steady_state.probes[0].when[1]", "before", []string{"listed twice"}}},
		{"no when", edit("      when: [before, after]\n", ""),
			wantErr{13, 7, "steady_state.probes[0].when", "name", []string{"missing"}}},
		{"probe reaches elsewhere", edit("http://127.0.0.1:9090", "http://prometheus.monitoring:9090"),
			wantErr{19, 21, "steady_state.probes[1].promql.url", `"http://prometheus`, []string{"reaches host prometheus.monitoring", "port-forward"}}},
		{"target placeholder in the middle", edit(`"{{target}}/healthz"`, `"http://x/{{target}}"`),
			wantErr{15, 19, "steady_state.probes[0].http.url", `"http://x`, []string{"may only start the URL"}}},
		{"bad tolerance", edit("value <= 3", "value =< 3"),
			wantErr{26, 18, "steady_state.probes[2].tolerance", "value =< 3", []string{`"=<" is not a comparison`}}},
		{"within before without before", edit("when: [before, continuously, after]", "when: [continuously, after]"),
			wantErr{20, 18, "steady_state.probes[1].tolerance", "within", []string{"does not run before; add before to when"}}},
		{"promql without tolerance", edit("      tolerance: within 10% of before\n", ""),
			wantErr{16, 7, "steady_state.probes[1].tolerance", "name: held", []string{"missing", "judged by a tolerance"}}},
		{"during an unknown fault", edit("during: cut", "during: cutt"),
			wantErr{23, 15, "steady_state.probes[2].during", "cutt", []string{`did you mean "cut"?`}}},
		{"during without when during", edit("when: during", "when: after"),
			wantErr{23, 7, "steady_state.probes[2].during", "during", []string{"when does not say during"}}},
		{"every on a before probe", edit("      when: [before, after]\n", "      when: [before, after]\n      every: 1s\n"),
			wantErr{15, 7, "steady_state.probes[0].every", "every", []string{"runs only before and after", "remove every"}}},
		{"every a nanosecond", edit("every: 1s", "every: 1ns"),
			wantErr{18, 14, "steady_state.probes[1].every", "1ns", []string{"1ns is shorter than 100ms", "a storm"}}},
		{"retry_interval a microsecond", edit("      when: during\n", "      when: during\n      retry_interval: 1us\n"),
			wantErr{23, 23, "steady_state.probes[2].retry_interval", "1us", []string{"shorter than 10ms"}}},
		{"wait_for polling a nanosecond", edit("timeout: 1m}", "timeout: 1m, interval: 1ns}"),
			wantErr{30, 77, "rollbacks[0].wait_for.interval", "1ns", []string{"shorter than 10ms"}}},
		{"too many retries", edit("      when: during\n", "      when: during\n      retries: 1000\n"),
			wantErr{23, 16, "steady_state.probes[2].retries", "1000", []string{"at most 100"}}},
		{"timeout too long", edit("timeout: 10s", "timeout: 1h"),
			wantErr{24, 16, "steady_state.probes[2].timeout", "1h", []string{"at most 5m"}}},
		{"two kinds", edit(`      http: {url: "{{target}}/healthz", body_contains: ok}`, `      http: {url: "{{target}}/healthz", body_contains: ok}`+"\n      command: {command: x}"),
			wantErr{16, 7, "steady_state.probes[0].command", "command", []string{"already says http"}}},
		{"nothing to probe", edit(`      http: {url: "{{target}}/healthz", body_contains: ok}`+"\n", ""),
			wantErr{13, 7, "steady_state.probes[0]", "name", []string{"give one of http, command, promql"}}},
		{"tolerance on an http status", edit("body_contains: ok}", "body_contains: ok}\n      tolerance: value == 200"),
			wantErr{16, 7, "steady_state.probes[0].tolerance", "tolerance", []string{"add json_field"}}},
		{"duplicate probe", edit("name: held", "name: healthz"),
			wantErr{16, 13, "steady_state.probes[1].name", "healthz", []string{"duplicate probe name"}}},
		{"exit status out of range", edit("args: [--quick]", "args: [--quick], exit_status: 300"),
			wantErr{25, 68, "steady_state.probes[2].command.exit_status", "300", []string{"at most 255"}}},
		{"rollback removes an unknown fault", edit("faults: [cut]", "faults: [cutt]"),
			wantErr{31, 30, "rollbacks[1].remove_faults.faults[0]", "cutt", []string{"not a toxic fault", "use one of cut"}}},
		{"rollback does two things", edit("  - remove_faults: {faults: [cut]}\n", "  - remove_faults: {faults: [cut]}\n    exec: {command: x}\n"),
			wantErr{31, 5, "rollbacks[1].remove_faults", "remove_faults", []string{"already says exec"}}},
		{"rollback without an action", edit("  - wait_for: {command: [sh, -c, \"exit 0\"]}\n", "  - name: nothing\n"),
			wantErr{32, 5, "rollbacks[2]", "name", []string{"give one of exec, wait_for, remove_faults"}}},
		{"rollback exec without command", edit("command: ./rollback.sh, ", ""),
			wantErr{29, 5, "rollbacks[0].exec.command", "exec", []string{"missing"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tt.src))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v, want a *ValidationError", err)
			}
			lines := strings.Split(tt.src, "\n")
			for _, got := range ve.Errs {
				if got.Line != tt.want.line || got.Col != tt.want.col || got.Field != tt.want.field {
					continue
				}
				if tt.want.at != "" && !strings.HasPrefix(textAt(lines, got.Line, got.Col), tt.want.at) {
					t.Errorf("points at %q, want %q", textAt(lines, got.Line, got.Col), tt.want.at)
				}
				for _, m := range tt.want.msg {
					if !strings.Contains(got.Msg, m) {
						t.Errorf("message %q lacks %q", got.Msg, m)
					}
				}
				return
			}
			t.Errorf("no error at %d:%d %s; got:\n%v", tt.want.line, tt.want.col, tt.want.field, err)
		})
	}
}

// Validate holds a workload built or changed in Go to the same rules.
func TestValidateSteadyState(t *testing.T) {
	w, err := Parse("s.yaml", []byte(steadyBase))
	if err != nil {
		t.Fatal(err)
	}
	w.SteadyState.Probes[0].HTTP.URL = "http://10.1.2.3/healthz"
	w.SteadyState.Probes[1].Tolerance = "within 5"
	w.SteadyState.Probes[2].During = "nope"
	w.SteadyState.Probes = append(w.SteadyState.Probes, SteadyProbe{Name: "empty", When: []string{"sometimes"}, Timeout: time.Second})
	w.Rollbacks[1].Faults = []string{"nope"}
	w.Rollbacks = append(w.Rollbacks, Rollback{Name: "undo"})
	err = w.Validate()
	for _, want := range []string{
		"steady_state.probes[0].http.url: reaches host 10.1.2.3",
		"steady_state.probes[1].tolerance: tolerance \"within 5\"",
		"steady_state.probes[2].during: names fault \"nope\"",
		"steady_state.probes[3].when[0]: \"sometimes\" is not one of",
		"steady_state.probes[3]: sets 0 of http, command, promql",
		"rollbacks[1].remove_faults.faults[0]: names \"nope\"",
		"rollbacks[3].name: duplicate rollback name \"undo\"",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v\nlacks %q", err, want)
		}
	}
}
