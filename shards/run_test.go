package shards

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// A workload that restarts the reference server is refused as shard processes, as a
// configuration error; a small one passes on this machine.
func TestCheck(t *testing.T) {
	w, err := workloads.Resolve("rolling-deploy-fast")
	if err != nil {
		t.Fatal(err)
	}
	var ce *engine.ConfigError
	if _, err := Check(w, 2, true); !errors.As(err, &ce) || !strings.Contains(err.Error(), "acts on the reference server run by the process of the run") {
		t.Errorf("rolling-deploy-fast as 2 processes: %v, want refused", err)
	}
	w, err = workloads.Resolve("seed-incident-fast")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(w, 2, true); err != nil {
		t.Errorf("seed-incident-fast as 2 processes: %v", err)
	}
}

// The shards get the flags set, as given, each value of a repeatable one on its own, and none
// of the parent's.
func TestFlagArgs(t *testing.T) {
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.String("out", "", "")
	f.String("progress", "auto", "")
	f.StringArray("header", nil, "")
	f.Bool("http2", false, "")
	f.String("tool", "", "")
	if err := f.Parse([]string{"--out", "x.json", "--header", "A: ${TOKEN}", "--http2", "--header", "B: 2"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"--header", "A: ${TOKEN}", "--header", "B: 2", "--http2=true"}
	if got := FlagArgs(f); !slices.Equal(got, want) {
		t.Errorf("FlagArgs = %q, want %q", got, want)
	}
}

// Self is an absolute path to an executable file: the test binary, here.
func TestSelf(t *testing.T) {
	p, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || !filepath.IsAbs(p) || st.Mode()&0o111 == 0 {
		t.Errorf("Self = %q (%v): want an absolute path to an executable", p, err)
	}
}

// A merged run's outcome: interrupted first, then the shards that failed, then the merged
// export's gate.
func TestOutcome(t *testing.T) {
	passed := &results.Export{}
	failed := &results.Export{Thresholds: []results.ThresholdResult{{Expr: "overall.misattributed_errors == 0", Actual: "1"}}}
	if err := (&Result{Export: failed, Interrupted: true}).Outcome(); !errors.Is(err, engine.ErrInterrupted) {
		t.Errorf("interrupted: %v", err)
	}
	if err := (&Result{Export: passed}).Outcome(); err != nil {
		t.Errorf("every shard exported and passed: %v", err)
	}
	err := (&Result{Export: failed, Died: []string{"shard 1 (exit status 1)"}}).Outcome()
	var ge *results.GateError
	if err == nil || errors.As(err, &ge) || !strings.HasPrefix(err.Error(), "shard 1 (exit status 1) failed") {
		t.Errorf("a shard died: %v, want it said, not the gate", err)
	}
	if err := (&Result{Export: failed}).Outcome(); !errors.As(err, &ge) {
		t.Errorf("failed thresholds: %v, want a gate error", err)
	}
}
