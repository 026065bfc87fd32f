package check

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeKubectl answers as kubectl does for one Job in the state STATE (missing, complete,
// failed): `get` fails with kubectl's NotFound error for a missing Job; `wait` returns at once
// for the condition that holds and otherwise waits until it is killed (its --timeout, here 30 s
// at most). There is no cluster on a CI machine; what is tested is wait-job's reading of it.
const fakeKubectl = `#!/bin/sh
state=$FAKE_JOB_STATE
case "$1" in
get)
  if [ "$state" = missing ]; then echo 'Error from server (NotFound): jobs.batch "'"${2#job/}"'" not found' >&2; exit 1; fi
  case "$*" in *jsonpath*) echo "BackoffLimitExceeded: Job has reached the specified backoff limit" ;; *) echo "$2" ;; esac ;;
wait)
  case "$2:$state" in
  --for=condition=complete:complete | --for=condition=failed:failed) exit 0 ;;
  esac
  sleep 30 ;;
logs) echo "[pod/x] mcpchaos: 1 of 1 thresholds failed" ;;
esac
`

func TestWaitJob(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(fakeKubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		state  string
		status int
		says   string
	}{
		{"complete", 0, "job/mcpchaos-shards-1 complete"},
		{"failed", 1, "FAILED: BackoffLimitExceeded"},
		{"missing", 2, `no such Job: Error from server (NotFound): jobs.batch "mcpchaos-shards-1" not found`},
	} {
		cmd := exec.Command("bash", filepath.Join("..", "wait-job"), "mcpchaos-shards-1", "1m")
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKE_JOB_STATE="+c.state)
		out, err := cmd.CombinedOutput()
		status := 0
		if ee, ok := err.(*exec.ExitError); ok {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if status != c.status || !strings.Contains(string(out), c.says) {
			t.Errorf("%s Job: exit %d, %q; want exit %d saying %q", c.state, status, out, c.status, c.says)
		}
	}
}
