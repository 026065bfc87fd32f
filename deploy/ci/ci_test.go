// Package ci_test runs the CI wrappers of mcpchaos as their runners would: the composite GitHub
// Action (action.yml at the repository's root) step by step, with the files and variables a
// GitHub runner provides (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_PATH, RUNNER_TEMP), and the
// GitLab template's script with its variables. Steps that use other actions are played by what
// they do here: the cache by a directory per key (restore-keys match the newest by prefix),
// setup-go by the Go that runs this test, upload-artifact by checking its files exist.
//
// This file is over 300 lines because a runner, however small, has to read expressions.
package ci_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// action is action.yml, read strictly: a misspelt key fails the test.
type action struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Branding    map[string]string `yaml:"branding"`
	Inputs      map[string]struct {
		Description string `yaml:"description"`
		Default     string `yaml:"default"`
		Required    bool   `yaml:"required"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []step `yaml:"steps"`
	} `yaml:"runs"`
}

type step struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	Env   map[string]string `yaml:"env"`
	With  map[string]string `yaml:"with"`
}

// runner is one job of a GitHub runner on this machine: its contexts and its cache.
type runner struct {
	t         *testing.T
	repo      string // github.action_path: this checkout
	work      string // the job's working directory
	temp      string // runner.temp
	cache     string // the Actions cache: one directory per key
	event     string
	runID     int
	inputs    map[string]string
	outputs   map[string]map[string]string // steps.ID.outputs
	path      []string                     // GITHUB_PATH additions
	summary   string
	uploaded  []string
	exitCode  int // the job's: the first failing step's
	ranVerdic bool
}

var expr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// value evaluates one context reference of the kinds action.yml uses.
func (r *runner) value(ref string) string {
	switch {
	case strings.HasPrefix(ref, "inputs."):
		return r.inputs[strings.TrimPrefix(ref, "inputs.")]
	case strings.HasPrefix(ref, "steps."):
		parts := strings.SplitN(ref, ".", 4) // steps ID outputs NAME
		if len(parts) == 4 && parts[2] == "outputs" {
			return r.outputs[parts[1]][parts[3]]
		}
	case ref == "github.action_path":
		return r.repo
	case ref == "runner.temp":
		return r.temp
	case ref == "github.sha":
		return "0123456789abcdef0123456789abcdef01234567"
	case ref == "github.run_id":
		return fmt.Sprint(r.runID)
	case ref == "github.run_attempt":
		return "1"
	case ref == "github.event_name":
		return r.event
	case ref == "github.token", ref == "github.repository", ref == "github.event.pull_request.number":
		return "unused-here"
	}
	r.t.Fatalf("action.yml uses ${{ %s }}, which this runner does not know: add it here", ref)
	return ""
}

func (r *runner) expand(s string) string {
	return expr.ReplaceAllStringFunc(s, func(m string) string { return r.value(expr.FindStringSubmatch(m)[1]) })
}

// cond evaluates a step's if: always(), success() by default, and && of A == 'B' comparisons.
func (r *runner) cond(s string) bool {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "${{"), "}}"))
	if s == "always()" {
		return true
	}
	if r.exitCode != 0 { // success() is implied: a failed step skips the rest
		return false
	}
	if s == "" {
		return true
	}
	for _, c := range strings.Split(s, "&&") {
		left, right, ok := strings.Cut(c, "==")
		if !ok {
			r.t.Fatalf("if: %q: this runner reads only A == 'B' && ...", s)
		}
		if r.value(strings.TrimSpace(left)) != strings.Trim(strings.TrimSpace(right), "'") {
			return false
		}
	}
	return true
}

// play runs every step of the action in order, as the runner does.
func (r *runner) play(a *action) {
	for _, s := range a.Runs.Steps {
		if !r.cond(s.If) {
			continue
		}
		switch {
		case strings.HasPrefix(s.Uses, "actions/setup-go@"):
			if _, err := exec.LookPath("go"); err != nil {
				r.t.Fatal("setup-go: no go on PATH")
			}
		case strings.HasPrefix(s.Uses, "actions/cache/restore@"):
			r.restore(r.expand(s.With["path"]), r.expand(s.With["key"]), r.expand(s.With["restore-keys"]))
		case strings.HasPrefix(s.Uses, "actions/cache/save@"):
			r.save(r.expand(s.With["path"]), r.expand(s.With["key"]))
		case strings.HasPrefix(s.Uses, "actions/upload-artifact@"):
			for _, p := range strings.Fields(r.expand(s.With["path"])) {
				if _, err := os.Stat(filepath.Join(r.work, p)); err == nil {
					r.uploaded = append(r.uploaded, p)
				}
			}
		case s.Uses != "":
			r.t.Fatalf("step %q uses %s, which this runner cannot play", s.Name, s.Uses)
		default:
			r.shell(s)
		}
	}
}

// shell runs a run: step with bash, the files a runner gives a step, and its env.
func (r *runner) shell(s step) {
	if s.Shell != "bash" {
		r.t.Fatalf("step %q: shell %q; a composite action's run step must name its shell (bash)", s.Name, s.Shell)
	}
	out := filepath.Join(r.temp, "output")
	addPath := filepath.Join(r.temp, "path")
	summary := filepath.Join(r.temp, "summary")
	for _, f := range []string{out, addPath, summary} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", r.expand(s.Run))
	cmd.Dir = r.work
	env := append(os.Environ(), "GITHUB_OUTPUT="+out, "GITHUB_PATH="+addPath, "GITHUB_STEP_SUMMARY="+summary,
		"RUNNER_TEMP="+r.temp, "GITHUB_EVENT_NAME="+r.event, "PATH="+strings.Join(append(slices.Clone(r.path), os.Getenv("PATH")), string(os.PathListSeparator)))
	for k, v := range s.Env {
		env = append(env, k+"="+r.expand(v))
	}
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	r.t.Logf("step %q:\n%s", s.Name, b)
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			r.t.Fatalf("step %q: %v", s.Name, err)
		}
		r.exitCode = ee.ExitCode()
	}
	if s.Name == "Verdict" {
		r.ranVerdic = true
	}
	if s.ID != "" {
		r.outputs[s.ID] = readKV(r.t, out)
	}
	for _, p := range strings.Split(strings.TrimSpace(readFile(r.t, addPath)), "\n") {
		if p != "" {
			r.path = append([]string{p}, r.path...)
		}
	}
	r.summary += readFile(r.t, summary)
}

func (r *runner) restore(path, key, prefix string) {
	hit := key
	if _, err := os.Stat(filepath.Join(r.cache, key)); err != nil { // no exact hit: the newest by prefix
		hit = ""
		entries, _ := os.ReadDir(r.cache) // sorted by name: the later run sorts last here
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), prefix) {
				hit = e.Name()
			}
		}
	}
	if hit != "" {
		copyDir(r.t, filepath.Join(r.cache, hit), path)
	}
}

func (r *runner) save(path, key string) {
	dst := filepath.Join(r.cache, key)
	if _, err := os.Stat(dst); err == nil {
		r.t.Fatalf("cache/save: key %s exists; the Actions cache refuses to overwrite a key", key)
	}
	copyDir(r.t, path, dst)
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readKV reads KEY=VALUE lines (GITHUB_OUTPUT's simple form, and gate.env).
func readKV(t *testing.T, p string) map[string]string {
	t.Helper()
	kv := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(readFile(t, p)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = v
		}
	}
	return kv
}

func loadAction(t *testing.T, repo string) *action {
	t.Helper()
	var a action
	if err := yaml.UnmarshalWithOptions([]byte(readFile(t, filepath.Join(repo, "action.yml"))), &a, yaml.Strict()); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml runs.using %q, want composite", a.Runs.Using)
	}
	return &a
}

// newJob is a runner for one job with the action's input defaults, overridden by inputs.
func newJob(t *testing.T, a *action, repo, work, cache string, inputs map[string]string) *runner {
	r := &runner{t: t, repo: repo, work: work, temp: t.TempDir(), cache: cache, event: "push",
		inputs: map[string]string{}, outputs: map[string]map[string]string{}}
	for k, in := range a.Inputs {
		r.inputs[k] = in.Default
	}
	for k, in := range a.Inputs {
		r.inputs[k] = r.expand(in.Default)
		if in.Required && inputs[k] == "" {
			t.Fatalf("input %s is required", k)
		}
	}
	for k, v := range inputs {
		if _, ok := a.Inputs[k]; !ok {
			t.Fatalf("action.yml has no input %q", k)
		}
		r.inputs[k] = v
	}
	return r
}

// A short run of the built-in target: the gate's thresholds hold on it.
const gateWorkload = `name: ci-gate
target:
  builtin: {session_ttl: 30s, retention: 60s}
phases:
  - {name: calls, duration: 1s, calls: true}
groups:
  - {name: probe, clients: 2, policy: probe, call_every: 200ms}
thresholds:
  - probe.misattributed_errors == 0
`

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func exportLabels(t *testing.T, p string) map[string]string {
	t.Helper()
	var exp struct {
		Run struct {
			Labels map[string]string `json:"labels"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(readFile(t, p)), &exp); err != nil {
		t.Fatal(err)
	}
	return exp.Run.Labels
}

// The action as the jobs of one pipeline, as a runner plays them: the first starts the
// baseline (it says so), the second is compared with it and joins it only if its verdict is ok,
// the third fails its threshold (written with spaces: one argument per line) and exits 99 with
// its outputs uploaded and the baseline untouched; a pull request's job with the same failure
// is advisory (it passes, says regressed, joins nothing); a job whose baseline is missing fails
// without running; a label with an empty value is left out. No output meant for a person names
// the runner's temporary directory.
func TestGitHubAction(t *testing.T) {
	repo := repoRoot(t)
	a := loadAction(t, repo)
	cache := t.TempDir()
	job := func(i int, event string, extra map[string]string) *runner {
		work := t.TempDir()
		if err := os.WriteFile(filepath.Join(work, "gate.yaml"), []byte(gateWorkload), 0o644); err != nil {
			t.Fatal(err)
		}
		in := map[string]string{"workload": "gate.yaml", "labels": fmt.Sprintf("release=1.%d\nenv=staging\nnote=two words *", i), "policy": "gate"}
		for k, v := range extra {
			in[k] = v
			if v == "" {
				delete(in, k) // not given: the input's default
			}
		}
		r := newJob(t, a, repo, work, cache, in)
		r.runID = 100 + i // sorts by run, as the cache's newest-first restore does
		r.event = event
		r.play(a)
		for _, f := range []string{"compare.md", "report.html"} {
			if b, err := os.ReadFile(filepath.Join(work, "mcpchaos-out", f)); err == nil && strings.Contains(string(b), r.temp) {
				t.Errorf("job %d: %s names the runner's temporary directory %s", i, f, r.temp)
			}
		}
		return r
	}
	joinedRuns := 0
	for i := 1; i <= 2; i++ {
		extra := map[string]string{}
		if i == 1 {
			extra["start-baseline"] = "true"
		}
		r := job(i, "push", extra)
		v, joined := r.outputs["gate"]["verdict"], r.outputs["gate"]["joined"]
		// With one baseline, a starved runner leaves latency unjudged: inconclusive, which the
		// gate policy passes without adding the run to the baseline.
		if r.exitCode != 0 || r.outputs["gate"]["status"] != "0" || (v != "ok" && v != "inconclusive") || joined != fmt.Sprint(v == "ok") {
			t.Fatalf("job %d: exit %d, gate outputs %v; want a pass that joins the baseline if its verdict is ok", i, r.exitCode, r.outputs["gate"])
		}
		if joined == "true" {
			joinedRuns++
		}
		if !r.ranVerdic {
			t.Errorf("job %d: the Verdict step did not run", i)
		}
		got := exportLabels(t, filepath.Join(r.work, "mcpchaos-out/current.json"))
		if got["release"] != fmt.Sprintf("1.%d", i) || got["env"] != "staging" || got["note"] != "two words *" {
			t.Errorf("job %d: export labels %v, want release, env and note as given", i, got)
		}
		want := "no baseline yet"
		if i == 2 {
			want = "### mcpchaos compare: "
		}
		if !strings.Contains(r.summary, want) || !strings.Contains(r.summary, map[bool]string{true: "This run joined the baseline", false: "did not join the baseline: the verdict is inconclusive"}[joined == "true"]) {
			t.Errorf("job %d: step summary %q lacks %q or what became of the baseline", i, r.summary, want)
		}
		if len(r.uploaded) != 4+min(i-1, 1) {
			t.Errorf("job %d: uploaded %v, want the export, both JUnit files (compare's once there is a baseline), report and compare", i, r.uploaded)
		}
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != joinedRuns { // one key per run that joined
		t.Fatalf("cache keys %d, want %d", len(entries), joinedRuns)
	}

	// The third job's own threshold fails: exit 99 whatever compare says; nothing is saved.
	r := job(3, "push", map[string]string{"args": "--threshold\nprobe.tool_calls_ok < 0", "labels": ""})
	if r.exitCode != 99 || r.outputs["gate"]["run-status"] != "99" || r.outputs["gate"]["joined"] != "false" || r.outputs["gate"]["verdict"] != "regressed" {
		t.Fatalf("failing job: exit %d, outputs %v; want 99, run-status 99, regressed, not joined", r.exitCode, r.outputs["gate"])
	}
	if len(r.uploaded) != 5 {
		t.Errorf("failing job: uploaded %v, want all five outputs (the upload runs always)", r.uploaded)
	}
	if after, _ := os.ReadDir(cache); len(after) != joinedRuns {
		t.Errorf("cache keys %d after a failing job, want still %d: a failed run never joins the baseline", len(after), joinedRuns)
	}
	if got := exportLabels(t, filepath.Join(r.work, "mcpchaos-out/current.json")); got["commit"] != r.value("github.sha") {
		t.Errorf("failing job: labels %v, want the default commit=${{ github.sha }}", got)
	}
	if !strings.Contains(r.summary, "### mcpchaos compare: Regressed") {
		t.Errorf("failing job: step summary %q lacks the verdict", r.summary)
	}

	// The same failure in a pull request (policy auto): advisory. It passes, says regressed,
	// and joins nothing.
	r = job(4, "pull_request", map[string]string{"args": "--threshold\nprobe.tool_calls_ok < 0", "policy": "", "labels": "release=\nenv=pr"})
	if r.exitCode != 0 || r.outputs["gate"]["verdict"] != "regressed" || r.outputs["gate"]["joined"] != "false" || !strings.Contains(r.summary, "advisory") {
		t.Fatalf("pull request: exit %d, outputs %v; want 0, regressed, not joined", r.exitCode, r.outputs["gate"])
	}
	if got := exportLabels(t, filepath.Join(r.work, "mcpchaos-out/current.json")); got["env"] != "pr" || len(got) != 1 {
		t.Errorf("pull request: labels %v, want env=pr alone (release= has no value)", got)
	}

	// A lost cache: no baseline, and the job does not say it starts one. It fails at once.
	r = job(5, "push", map[string]string{"baseline-key": "lost"})
	if r.exitCode != 2 || r.outputs["gate"]["verdict"] != "could not run" || !strings.Contains(r.summary, "holds no run") {
		t.Fatalf("lost baseline: exit %d, outputs %v, summary %q; want 2, could not run", r.exitCode, r.outputs["gate"], r.summary)
	}
	if _, err := os.Stat(filepath.Join(r.work, "mcpchaos-out/current.json")); err == nil {
		t.Error("lost baseline: the workload ran anyway")
	}
}

type gitlabJob struct {
	Variables    map[string]string `yaml:"variables"`
	Script       []string          `yaml:"script"`
	BeforeScript []string          `yaml:"before_script"`
	Cache        struct {
		Paths []string `yaml:"paths"`
		When  string   `yaml:"when"`
	} `yaml:"cache"`
	Artifacts struct {
		When    string   `yaml:"when"`
		Paths   []string `yaml:"paths"`
		Reports struct {
			JUnit  []string `yaml:"junit"`
			Dotenv string   `yaml:"dotenv"`
		} `yaml:"reports"`
	} `yaml:"artifacts"`
}

// The GitLab template's script, run with its variables and a job's: a pass writes the dotenv
// and JUnit reports where the template says, the cache is saved only on success (so a failed
// run never joins the baseline), and the before_script builds the same binary.
func TestGitLabTemplate(t *testing.T) {
	repo := repoRoot(t)
	var tpl map[string]gitlabJob
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(repo, "deploy/ci/gitlab-ci.yml"))), &tpl); err != nil {
		t.Fatalf("gitlab-ci.yml: %v", err)
	}
	job, ok := tpl[".mcpchaos-gate"]
	if !ok {
		t.Fatal("gitlab-ci.yml has no hidden job .mcpchaos-gate to extend")
	}
	if job.Cache.When != "on_success" || !slices.Contains(job.Cache.Paths, job.Variables["MCPCHAOS_BASELINE"]+"/") {
		t.Errorf("cache %+v: want the baseline directory, saved on success only", job.Cache)
	}
	if job.Artifacts.When != "always" {
		t.Errorf("artifacts when %q, want always: a failed gate's outputs are what the team reads", job.Artifacts.When)
	}
	if !strings.Contains(strings.Join(job.BeforeScript, "\n"), `-o /usr/local/bin/mcpchaos ./cmd/mcpchaos`) {
		t.Errorf("before_script %q does not build mcpchaos", job.BeforeScript)
	}
	if ref := job.Variables["MCPCHAOS_REF"]; !regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(ref) {
		t.Errorf("MCPCHAOS_REF %q: the template must pin a release of the tool, not build a branch", ref)
	}

	bin := filepath.Join(t.TempDir(), "mcpchaos")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mcpchaos")
	build.Dir = repo
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "gate.yaml"), []byte(gateWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"MCPCHAOS_SRC="+repo, "MCPCHAOS_WORKLOAD=gate.yaml", "GITHUB_EVENT_NAME=", "CI_MERGE_REQUEST_IID=")
	for k, v := range job.Variables {
		env = append(env, k+"="+v)
	}
	failing := "MCPCHAOS_ARGS=--threshold\nprobe.tool_calls_ok < 0" // one argument per line, spaces kept
	for i, tc := range []struct {
		pipeline string
		env      []string
		status   string
		verdict  string
		joined   bool
		labels   map[string]string
	}{
		// A branch pipeline: CI_COMMIT_TAG is empty, so release= is left out; it starts the baseline.
		{"branch", []string{"MCPCHAOS_START_BASELINE=true", "MCPCHAOS_LABELS=release=\nref=main\ncommit=abc"}, "0", "ok", true, map[string]string{"ref": "main", "commit": "abc"}},
		// A tag pipeline (strict): its threshold fails.
		{"tag", []string{"MCPCHAOS_LABELS=release=v2.0\nref=v2.0\ncommit=abc", failing}, "99", "regressed", false, map[string]string{"release": "v2.0", "ref": "v2.0", "commit": "abc"}},
		// A merge request's pipeline: advisory; the same failure is reported and passes.
		{"merge request", []string{"CI_MERGE_REQUEST_IID=7", "MCPCHAOS_LABELS=ref=feature", failing}, "0", "regressed", false, map[string]string{"ref": "feature"}},
	} {
		cmd := exec.Command("sh", "-ec", strings.Join(job.Script, "\n"))
		cmd.Dir, cmd.Env = work, append(slices.Clone(env), tc.env...)
		b, err := cmd.CombinedOutput()
		got := "0"
		if ee, ok := err.(*exec.ExitError); ok {
			got = fmt.Sprint(ee.ExitCode())
		} else if err != nil {
			t.Fatal(err)
		}
		t.Logf("script:\n%s", b)
		dotenv := readKV(t, filepath.Join(work, job.Artifacts.Reports.Dotenv))
		if got != tc.status || dotenv["MCPCHAOS_STATUS"] != tc.status || dotenv["MCPCHAOS_JOINED"] != fmt.Sprint(tc.joined) ||
			(dotenv["MCPCHAOS_VERDICT"] != tc.verdict && !(i == 0 && dotenv["MCPCHAOS_VERDICT"] == "inconclusive")) {
			t.Fatalf("job %d (%s pipeline): exit %s, dotenv %v; want status %s, verdict %s, joined %v", i+1, tc.pipeline, got, dotenv, tc.status, tc.verdict, tc.joined)
		}
		if got := exportLabels(t, filepath.Join(work, "mcpchaos-out/current.json")); !maps.Equal(got, tc.labels) {
			t.Errorf("job %d (%s pipeline): labels %v, want %v", i+1, tc.pipeline, got, tc.labels)
		}
		for j, f := range job.Artifacts.Reports.JUnit {
			if _, err := os.Stat(filepath.Join(work, f)); err != nil && (i > 0 || j == 0) {
				t.Errorf("job %d: JUnit report: %v", i+1, err)
			}
		}
	}
	runs, _ := filepath.Glob(filepath.Join(work, job.Variables["MCPCHAOS_BASELINE"], "*.json"))
	if len(runs) != 1 {
		t.Errorf("baseline holds %d runs, want 1: the passing job's", len(runs))
	}
}
