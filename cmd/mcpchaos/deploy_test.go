package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// The Kubernetes manifests are part of the command line's contract: their arguments must be
// ones mcpchaos accepts, the shard count must match the Indexed Job's completions, and the
// merge step must read where the shards write.
func TestKubernetesManifests(t *testing.T) {
	runID := "20260102-150405"
	startAt := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	load := func(name string) map[string]any {
		data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kubernetes", name))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.NewReplacer("${RUN_ID}", runID, "${START_AT}", startAt, "${IMAGE}", "registry.example.com/team/mcpchaos:1.4.2").Replace(string(data))
		if strings.Contains(s, "${") {
			t.Fatalf("%s: a placeholder other than ${IMAGE}, ${RUN_ID} and ${START_AT}", name)
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return m
	}
	get := func(m any, path ...any) any {
		for _, p := range path {
			switch k := p.(type) {
			case string:
				m = m.(map[string]any)[k]
			case int:
				m = m.([]any)[k]
			}
		}
		return m
	}
	dns1123 := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// container's args with $(VAR) expanded the way the kubelet does, from its env and extra.
	argsOf := func(job map[string]any, extra map[string]string) []string {
		c := get(job, "spec", "template", "spec", "containers", 0)
		env := map[string]string{}
		for k, v := range extra {
			env[k] = v
		}
		for _, e := range get(c, "env").([]any) {
			env[get(e, "name").(string)] = get(e, "value").(string)
		}
		var out []string
		for _, a := range get(c, "args").([]any) {
			out = append(out, regexp.MustCompile(`\$\(([A-Z_]+)\)`).ReplaceAllStringFunc(a.(string), func(m string) string {
				v, ok := env[m[2:len(m)-1]]
				if !ok {
					t.Fatalf("%s is not set in the container", m)
				}
				return v
			}))
		}
		return out
	}
	// parse finds the subcommand and parses its flags as mcpchaos would.
	parse := func(args []string) map[string]string {
		root := newRoot()
		cmd, rest, err := root.Find(args)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatalf("mcpchaos %s: %v", strings.Join(args, " "), err)
		}
		flags := map[string]string{"0": cmd.Name()}
		for i, a := range cmd.Flags().Args() {
			flags[strconv.Itoa(i+1)] = a
		}
		for _, n := range []string{"shard", "start-at", "out", "metrics-addr", "progress"} {
			if f := cmd.Flags().Lookup(n); f != nil {
				flags[n] = f.Value.String()
			}
		}
		return flags
	}

	shards := load("shards-job.yaml")
	if name := get(shards, "metadata", "name").(string); !dns1123.MatchString(name) {
		t.Errorf("job name %q is not a valid Kubernetes name", name)
	}
	if get(shards, "spec", "completionMode") != "Indexed" {
		t.Error("the shards Job is not an Indexed Job")
	}
	n := int(get(shards, "spec", "completions").(uint64))
	if p := int(get(shards, "spec", "parallelism").(uint64)); p != n {
		t.Errorf("parallelism %d != completions %d: shards meant to start together would wait", p, n)
	}
	rule := get(shards, "spec", "podFailurePolicy", "rules", 0)
	if get(rule, "action") != "FailJob" || get(rule, "onExitCodes", "values", 0).(uint64) != exitThresholds {
		t.Errorf("exit %d (an abort_on_fail threshold) does not fail the Job: %v", exitThresholds, rule)
	}
	var outDir string
	for i := range n {
		f := parse(argsOf(shards, map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(i)}))
		if f["0"] != "run" {
			t.Fatalf("shard %d runs %q", i, f["0"])
		}
		s, err := parseShard(f["shard"])
		if err != nil || s.Index != i || s.Count != n {
			t.Errorf("shard %d: --shard %s (%v), want %d/%d", i, f["shard"], err, i, n)
		}
		if _, err := parseStartAt(f["start-at"], time.Now(), true); err != nil {
			t.Errorf("--start-at: %v", err)
		}
		if err := checkMetricsAddr(f["metrics-addr"], true); err != nil {
			t.Error(err)
		}
		if want := "shard-" + strconv.Itoa(i) + ".json"; filepath.Base(f["out"]) != want {
			t.Errorf("shard %d writes %s", i, f["out"])
		}
		outDir = filepath.Dir(f["out"])
	}

	merge := load("merge-job.yaml")
	f := parse(argsOf(merge, nil))
	if f["0"] != "merge" || f["1"] != outDir {
		t.Errorf("the merge step runs %q on %q, want merge on %q, where the shards write", f["0"], f["1"], outDir)
	}
	if filepath.Dir(f["out"]) != outDir {
		t.Errorf("merged export %s is not beside the shards", f["out"])
	}
	for _, m := range []map[string]any{shards, merge} {
		claim := get(m, "spec", "template", "spec", "volumes")
		found := false
		for _, v := range claim.([]any) {
			if pvc, ok := v.(map[string]any)["persistentVolumeClaim"]; ok && get(pvc, "claimName") == "mcpchaos-results" {
				found = true
			}
		}
		if !found {
			t.Error("a Job does not mount the mcpchaos-results volume")
		}
	}
	if get(load("results-pvc.yaml"), "metadata", "name") != "mcpchaos-results" {
		t.Error("the volume claim is not mcpchaos-results")
	}
}
