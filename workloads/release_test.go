package workloads

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// releaseBuiltins are the release-day workloads; TestBuiltins counts them as covered here.
var releaseBuiltins = []string{"affinity-loss", "affinity-loss-fast", "rolling-deploy", "rolling-deploy-fast"}

// Each release-day builtin tells its story: replicas behind a sticky router with a shared,
// permissive log; no TTL runs out during the run (every death is the fault's); a rolling
// restart that drains, or a rebalance; -fast ones take seconds, the others minutes.
func TestReleaseBuiltins(t *testing.T) {
	for _, name := range releaseBuiltins {
		t.Run(name, func(t *testing.T) {
			w, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			b := w.Target.Builtin
			if b.Replicas < 3 || b.Routing != "sticky" || b.EventLog != "shared" || b.GetValidation != GetPermissive {
				t.Errorf("target = %+v; want 3+ sticky replicas, a shared log, a permissive GET", *b)
			}
			if b.SessionTTL <= w.Duration || b.Retention <= w.Duration {
				t.Errorf("ttl %s, retention %s, run %s: no TTL or retention may run out during the run", b.SessionTTL, b.Retention, w.Duration)
			}
			if !w.Topological() {
				t.Error("not run as a cluster")
			}
			var kinds []string
			for _, f := range w.Faults {
				if f.Action != nil {
					kinds = append(kinds, f.Action.Kind)
					if f.Action.Kind == ActionRestart && (f.Action.Replica != -1 || f.Action.Delay <= 0 || f.Action.Grace <= 0 ||
						f.At+time.Duration(b.Replicas)*f.Action.Delay >= w.Duration) {
						t.Errorf("restart %+v at %s: want every replica in turn, with a delay and a grace, within the run", *f.Action, f.At)
					}
				}
			}
			want := ActionRestart
			if strings.HasPrefix(name, "affinity-loss") {
				want = ActionRebalance
			}
			if !slices.Contains(kinds, want) {
				t.Errorf("actions %v lack %s", kinds, want)
			}
			fast := strings.HasSuffix(name, "-fast")
			if fast && w.Duration >= 20*time.Second || !fast && w.Duration < 5*time.Minute {
				t.Errorf("%s lasts %s", name, w.Duration)
			}
			if last := w.Phases[len(w.Phases)-1]; !last.Calls {
				t.Error("the last phase makes no calls: nothing would meet the dead sessions")
			}
		})
	}
}

const releaseBase = `name: r
target:
  builtin:
    session_ttl: 30s
    replicas: 3
    routing: hash
    event_log: redis://127.0.0.1:6379/2
phases:
  - name: a
    duration: 10s
    calls: true
groups:
  - name: g
    clients: 1
    policy: naive
faults:
  - name: deploy
    restart: {replica: all, delay: 1s, grace: 300ms}
    at: 1s
  - name: one
    restart: {replica: 2}
    at: 2s
  - rebalance: {}
    at: 3s
  - name: down-to-one
    scale: {replicas: 1}
    at: 4s
  - name: script
    exec:
      command: ./deploy.sh
      args: [--canary, 3]
      env: {DEPLOY_TOKEN: "${RD_TEST_TOKEN}", REGION: eu}
      timeout: 30s
    wait_for: {url: "http://127.0.0.1:8080/healthz", timeout: 10s, interval: 100ms}
    at: 5s
  - name: ready
    wait_for: {command: [sh, -c, "exit 0"]}
    at: 6s
`

func TestReleaseKeys(t *testing.T) {
	w, err := Parse("r.yaml", []byte(releaseBase))
	if err != nil {
		t.Fatal(err)
	}
	b := w.Target.Builtin
	if b.Replicas != 3 || b.Routing != "hash" || b.EventLog != "redis://127.0.0.1:6379/2" {
		t.Errorf("topology = %d %s %s", b.Replicas, b.Routing, b.EventLog)
	}
	acts := map[string]*Action{}
	for _, f := range w.Faults {
		if f.Action == nil || f.Toxic != "" || f.For != 0 {
			t.Fatalf("fault %+v: want an action", f)
		}
		acts[f.Name] = f.Action
	}
	if a := acts["deploy"]; a.Kind != ActionRestart || a.Replica != -1 || a.Delay != time.Second || a.Grace != 300*time.Millisecond {
		t.Errorf("deploy = %+v", *a)
	}
	if a := acts["one"]; a.Replica != 2 {
		t.Errorf("one = %+v", *a)
	}
	if a := acts["rebalance-2"]; a == nil || a.Kind != ActionRebalance {
		t.Errorf("unnamed rebalance = %+v (names %v)", a, w.Faults)
	}
	if a := acts["down-to-one"]; a.Kind != ActionScale || a.Replicas != 1 {
		t.Errorf("scale = %+v", *a)
	}
	a := acts["script"]
	if a.Kind != ActionExec || a.Command != "./deploy.sh" || !slices.Equal(a.Args, []string{"--canary", "3"}) || a.Timeout != 30*time.Second ||
		a.MaxOutput != 64<<10 || a.WaitFor == nil || a.WaitFor.URL != "http://127.0.0.1:8080/healthz" || a.WaitFor.Interval != 100*time.Millisecond {
		t.Errorf("exec = %+v wait %+v", *a, a.WaitFor)
	}
	env, secrets, err := a.ExpandEnv(func(k string) (string, bool) {
		return map[string]string{"RD_TEST_TOKEN": "s3cr3t-t0ken"}[k], k == "RD_TEST_TOKEN"
	})
	if err != nil || !slices.Equal(env, []string{"DEPLOY_TOKEN=s3cr3t-t0ken", "REGION=eu"}) || !slices.Equal(secrets, []string{"s3cr3t-t0ken"}) {
		t.Errorf("env %v secrets %v err %v", env, secrets, err)
	}
	if _, _, err := a.ExpandEnv(func(string) (string, bool) { return "", false }); err == nil || !strings.Contains(err.Error(), "${RD_TEST_TOKEN} is not set") {
		t.Errorf("missing variable: %v", err)
	}
	if r := acts["ready"]; r.Kind != ActionWaitFor || !slices.Equal(r.WaitFor.Command, []string{"sh", "-c", "exit 0"}) || r.WaitFor.Timeout != 2*time.Minute {
		t.Errorf("wait_for = %+v", r.WaitFor)
	}
}

func TestReleaseKeyErrors(t *testing.T) {
	edit := func(old, new string) string {
		if strings.Count(releaseBase, old) != 1 {
			t.Fatalf("edit: %q occurs %d times", old, strings.Count(releaseBase, old))
		}
		return strings.Replace(releaseBase, old, new, 1)
	}
	tests := []struct {
		name string
		src  string
		want wantErr
	}{
		{"unknown routing", edit("routing: hash", "routing: random"),
			wantErr{6, 14, "target.builtin.routing", "random", []string{`unknown value "random"`, "sticky, round-robin, hash"}}},
		{"event log not redis", edit("redis://127.0.0.1:6379/2", "http://127.0.0.1:6379"),
			wantErr{7, 16, "target.builtin.event_log", "http://", []string{"redis://"}}},
		{"event log database", edit("6379/2", "6379/x"),
			wantErr{7, 16, "target.builtin.event_log", "redis://", []string{`the database "x"`}}},
		{"event log database, a password never echoed", edit("redis://127.0.0.1:6379/2", "redis://:s3cr3t/pass@127.0.0.1:6379/x"),
			wantErr{7, 16, "target.builtin.event_log", "redis://", []string{`"redis://[redacted]@127.0.0.1:6379/x" is not a URL`}}},
		{"too many replicas", edit("replicas: 3", "replicas: 65"),
			wantErr{5, 15, "target.builtin.replicas", "65", []string{"at most 64"}}},
		{"restart a replica that does not exist", edit("{replica: 2}", "{replica: 3}"),
			wantErr{21, 24, "faults[1].restart.replica", "3", []string{"at most 2"}}},
		{"restart with a window", edit("    at: 2s\n", "    at: 2s\n    for: 1s\n"),
			wantErr{23, 5, "faults[1].for", "for", []string{"an action happens once"}}},
		{"two actions in one entry", edit("  - rebalance: {}\n", "  - rebalance: {}\n    scale: {replicas: 2}\n"),
			wantErr{24, 5, "faults[2].scale", "scale", []string{"already says rebalance"}}},
		{"exec without a command", edit("      command: ./deploy.sh\n", ""),
			wantErr{29, 5, "faults[4].exec.command", "exec", []string{"missing", "give the program to run"}}},
		{"bad env name", edit("REGION: eu", "1REGION: eu"),
			wantErr{32, 47, "faults[4].exec.env.1REGION", "1REGION", []string{"not an environment variable name"}}},
		{"wait for both", edit(`{command: [sh, -c, "exit 0"]}`, `{command: [sh], url: "http://127.0.0.1:1/"}`),
			wantErr{37, 16, "faults[5].wait_for.command", "command", []string{"a url or a command, not both"}}},
		{"restart against a url target", strings.Replace(releaseBase, "  builtin:\n    session_ttl: 30s\n    replicas: 3\n    routing: hash\n    event_log: redis://127.0.0.1:6379/2\n",
			"  url: http://127.0.0.1:9/mcp\n  session_ttl: 30s\n"+strings.Repeat("  # pad\n", 3), 1),
			wantErr{18, 5, "faults[0].restart", "restart", []string{"drive your own deploy with exec"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("r.yaml", []byte(tt.src))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v, want a *ValidationError", err)
			}
			lines := strings.Split(tt.src, "\n")
			var found bool
			for _, got := range ve.Errs {
				if got.Line != tt.want.line || got.Col != tt.want.col || got.Field != tt.want.field {
					continue
				}
				found = true
				if tt.want.at != "" && !strings.HasPrefix(textAt(lines, got.Line, got.Col), tt.want.at) {
					t.Errorf("points at %q, want %q", textAt(lines, got.Line, got.Col), tt.want.at)
				}
				for _, m := range tt.want.msg {
					if !strings.Contains(got.Msg, m) {
						t.Errorf("message %q lacks %q", got.Msg, m)
					}
				}
				if !strings.Contains(got.Msg, "; ") && !strings.Contains(got.Msg, ", e.g.") {
					t.Errorf("message %q does not say what to do", got.Msg)
				}
			}
			if !found {
				t.Errorf("no error at %d:%d %s; got:\n%v", tt.want.line, tt.want.col, tt.want.field, err)
			}
		})
	}
}
