// Package check validates the Kubernetes manifests of deploy/kubernetes against the Kubernetes
// API types and the Pod Security "restricted" level, offline: strict decoding into k8s.io/api
// types (an unknown or misspelt field, a wrong type, is an error) and the Pod Security
// admission's own evaluator (k8s.io/pod-security-admission), the code the API server runs.
//
// It is a module of its own so that the tool's go.mod does not carry the Kubernetes API.
// Run it with: (cd deploy/kubernetes/check && go test ./...)
package check

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// load reads a manifest with its placeholders filled in, as the README's envsubst does.
func load(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", name))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "image: ") && !strings.Contains(string(data), "image: ${IMAGE}") {
		t.Errorf("%s: an image written in; use ${IMAGE}, which envsubst fills in (docs/shards.md)", name)
	}
	s := strings.NewReplacer("${RUN_ID}", "20260102-150405", "${START_AT}", "2026-01-02T15:06:00Z", "${IMAGE}", "registry.example.com/team/mcpchaos:1.4.2").Replace(string(data))
	if strings.Contains(s, "${") {
		t.Fatalf("%s: a placeholder other than ${IMAGE}, ${RUN_ID} and ${START_AT}", name)
	}
	js, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return js
}

// strict decodes js into v, refusing fields v's type does not have.
func strict(t *testing.T, name string, js []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: not a valid %T: %v", name, v, err)
	}
}

func restricted(t *testing.T, name string, meta *metav1.ObjectMeta, spec *corev1.PodSpec) {
	t.Helper()
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	level := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	for _, r := range eval.EvaluatePod(level, meta, spec) {
		if !r.Allowed {
			t.Errorf("%s: refused where Pod Security is \"restricted\": %s: %s", name, r.ForbiddenReason, r.ForbiddenDetail)
		}
	}
}

func TestJobs(t *testing.T) {
	for _, name := range []string{"shards-job.yaml", "merge-job.yaml"} {
		var job batchv1.Job
		strict(t, name, load(t, name), &job)
		if job.APIVersion != "batch/v1" || job.Kind != "Job" {
			t.Errorf("%s: %s %s, want batch/v1 Job", name, job.APIVersion, job.Kind)
		}
		spec := &job.Spec.Template.Spec
		if len(spec.Containers) == 0 || spec.Containers[0].Image == "" {
			t.Errorf("%s: no container image", name)
		}
		if spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: restartPolicy %q, want Never (a re-run shard's clock would not match)", name, spec.RestartPolicy)
		}
		restricted(t, name, &job.Spec.Template.ObjectMeta, spec)
	}
}

func TestFetchPod(t *testing.T) {
	var pod corev1.Pod
	strict(t, "fetch-pod.yaml", load(t, "fetch-pod.yaml"), &pod)
	if pod.Kind != "Pod" || pod.Spec.Containers[0].ReadinessProbe == nil {
		t.Errorf("fetch-pod.yaml: want a Pod with a readiness probe")
	}
	restricted(t, "fetch-pod.yaml", &pod.ObjectMeta, &pod.Spec)
}

func TestVolumeClaim(t *testing.T) {
	var pvc corev1.PersistentVolumeClaim
	strict(t, "results-pvc.yaml", load(t, "results-pvc.yaml"), &pvc)
	if len(pvc.Spec.AccessModes) != 1 || pvc.Spec.AccessModes[0] != corev1.ReadWriteMany {
		t.Errorf("results-pvc.yaml: access modes %v, want ReadWriteMany (shards on several nodes)", pvc.Spec.AccessModes)
	}
}

// The checks can fail: a manifest with a misspelt field, or a root container, is refused.
func TestChecksRefuse(t *testing.T) {
	var job batchv1.Job
	dec := json.NewDecoder(strings.NewReader(`{"apiVersion":"batch/v1","kind":"Job","spec":{"backofLimit":0}}`))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&job); err == nil {
		t.Error("a misspelt field (backofLimit) decoded")
	}
	eval, _ := policy.NewEvaluator(policy.DefaultChecks(), nil)
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}
	allowed := true
	for _, r := range eval.EvaluatePod(psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}, &metav1.ObjectMeta{}, &spec) {
		allowed = allowed && r.Allowed
	}
	if allowed {
		t.Error("a pod without a securityContext passes \"restricted\"")
	}
}
