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
		"RUNNER_TEMP="+r.temp, "PATH="+strings.Join(append(slices.Clone(r.path), os.Getenv("PATH")), string(os.PathListSeparator)))
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

// The action as three jobs of one pipeline: the first starts the baseline, the second is
// compared with it and joins it, the third fails its threshold: the job fails with 99, the
// outputs are still uploaded, the summary says why, and the baseline is not touched.
func TestGitHubAction(t *testing.T) {
	repo := repoRoot(t)
	a := loadAction(t, repo)
	cache := t.TempDir()
	job := func(i int, extra map[string]string) *runner {
		work := t.TempDir()
		if err := os.WriteFile(filepath.Join(work, "gate.yaml"), []byte(gateWorkload), 0o644); err != nil {
			t.Fatal(err)
		}
		in := map[string]string{"workload": "gate.yaml", "labels": fmt.Sprintf("release=1.%d\nenv=staging", i)}
		for k, v := range extra {
			in[k] = v
			if v == "" {
				delete(in, k) // not given: the input's default
			}
		}
		r := newJob(t, a, repo, work, cache, in)
		r.runID = 100 + i // sorts by run, as the cache's newest-first restore does
		r.play(a)
		return r
	}
	for i := 1; i <= 2; i++ {
		r := job(i, nil)
		if r.exitCode != 0 || r.outputs["gate"]["status"] != "0" || r.outputs["gate"]["joined"] != "true" {
			t.Fatalf("job %d: exit %d, gate outputs %v; want a pass that joins the baseline", i, r.exitCode, r.outputs["gate"])
		}
		if !r.ranVerdic {
			t.Errorf("job %d: the Verdict step did not run", i)
		}
		if got := exportLabels(t, filepath.Join(r.work, "mcpchaos-out/current.json")); got["release"] != fmt.Sprintf("1.%d", i) || got["env"] != "staging" {
			t.Errorf("job %d: export labels %v, want release and env", i, got)
		}
		want := "no baseline yet"
		if i == 2 {
			want = "### mcpchaos compare: "
		}
		if !strings.Contains(r.summary, want) {
			t.Errorf("job %d: step summary %q lacks %q", i, r.summary, want)
		}
		if len(r.uploaded) != 4 {
			t.Errorf("job %d: uploaded %v, want the export, JUnit, report and compare", i, r.uploaded)
		}
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 2 { // one key per run that joined
		t.Fatalf("cache keys %d, want 2", len(entries))
	}
	runs, _ := os.ReadDir(filepath.Join(cache, entries[1].Name()))
	if len(runs) != 2 {
		t.Fatalf("the second job's baseline holds %d runs, want 2 (the first job's, restored, and its own)", len(runs))
	}

	// The third job's own threshold fails: exit 99 whatever compare says; nothing is saved.
	r := job(3, map[string]string{"args": "--threshold probe.tool_calls_ok<0", "labels": ""})
	if r.exitCode != 99 || r.outputs["gate"]["run-status"] != "99" || r.outputs["gate"]["joined"] != "false" {
		t.Fatalf("failing job: exit %d, outputs %v; want 99, run-status 99, not joined", r.exitCode, r.outputs["gate"])
	}
	if len(r.uploaded) != 4 {
		t.Errorf("failing job: uploaded %v, want all four outputs (the upload runs always)", r.uploaded)
	}
	if after, _ := os.ReadDir(cache); len(after) != 2 {
		t.Errorf("cache keys %d after a failing job, want still 2: a failed run never joins the baseline", len(after))
	}
	if got := exportLabels(t, filepath.Join(r.work, "mcpchaos-out/current.json")); got["commit"] != r.value("github.sha") {
		t.Errorf("failing job: labels %v, want the default commit=${{ github.sha }}", got)
	}
	if !strings.Contains(r.summary, "### mcpchaos compare: ") {
		t.Errorf("failing job: step summary %q lacks the compare verdict", r.summary)
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
			JUnit  string `yaml:"junit"`
			Dotenv string `yaml:"dotenv"`
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
	if !strings.Contains(strings.Join(job.BeforeScript, "\n"), "go build -trimpath -o /usr/local/bin/mcpchaos ./cmd/mcpchaos") {
		t.Errorf("before_script %q does not build mcpchaos", job.BeforeScript)
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
		"MCPCHAOS_SRC="+repo, "MCPCHAOS_WORKLOAD=gate.yaml", "MCPCHAOS_LABELS=release=2.0 commit=abc")
	for k, v := range job.Variables {
		env = append(env, k+"="+v)
	}
	for i, want := range []string{"0", "99"} {
		e := env
		if i == 1 {
			e = append(e, "MCPCHAOS_ARGS=--threshold probe.tool_calls_ok<0")
		}
		cmd := exec.Command("sh", "-ec", strings.Join(job.Script, "\n"))
		cmd.Dir, cmd.Env = work, e
		b, err := cmd.CombinedOutput()
		got := "0"
		if ee, ok := err.(*exec.ExitError); ok {
			got = fmt.Sprint(ee.ExitCode())
		} else if err != nil {
			t.Fatal(err)
		}
		t.Logf("script:\n%s", b)
		if got != want {
			t.Fatalf("job %d: exit %s, want %s", i+1, got, want)
		}
		dotenv := readKV(t, filepath.Join(work, job.Artifacts.Reports.Dotenv))
		if dotenv["MCPCHAOS_STATUS"] != want || dotenv["MCPCHAOS_JOINED"] != fmt.Sprint(want == "0") {
			t.Errorf("job %d: dotenv %v", i+1, dotenv)
		}
		if _, err := os.Stat(filepath.Join(work, job.Artifacts.Reports.JUnit)); err != nil {
			t.Errorf("job %d: JUnit report: %v", i+1, err)
		}
	}
	runs, _ := filepath.Glob(filepath.Join(work, job.Variables["MCPCHAOS_BASELINE"], "*.json"))
	if len(runs) != 1 {
		t.Errorf("baseline holds %d runs, want 1: the passing job's", len(runs))
	}
}
