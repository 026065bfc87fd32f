package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/resultstest"
)

// Files reads the current export and its baselines from disk, refuses another workload's
// baseline unless forced (then says so in Forced), and a directory without a good baseline;
// Gate passes a run against its twin, fails a regression, and does not judge an interrupted
// current run.
func TestFilesAndGate(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, e *results.Export) string {
		p := filepath.Join(dir, name)
		if err := results.WriteFile(p, e); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base.json", resultstest.Sample(t, 1, 1))
	cur := write("cur.json", resultstest.Sample(t, 1, 1))
	worse := resultstest.Sample(t, 1, 1)
	worse.Group("probe").Counters["misattributed_errors"]++ // may not grow at all
	worse.Overall.Counters["misattributed_errors"]++
	worseFile := write("worse.json", worse)
	other := resultstest.Sample(t, 2, 1)
	other.Run.Workload = "other"
	otherFile := write("other.json", other)
	tol := gate.DefaultTolerances()

	c, bases, e, err := Files([]string{base}, cur, 0, false, tol)
	if err != nil {
		t.Fatal(err)
	}
	if len(bases) != 1 || e.Run.Workload != "w" || c.Forced != "" {
		t.Fatalf("Files: %d baselines, workload %q, forced %q", len(bases), e.Run.Workload, c.Forced)
	}
	if err := Gate(c, bases, e, true); err != nil {
		t.Errorf("a run against its own twin: %v", err)
	}
	c, bases, e, err = Files([]string{base}, worseFile, 0, false, tol)
	if err != nil {
		t.Fatal(err)
	}
	var ge *results.GateError
	if err := Gate(c, bases, e, false); !errors.As(err, &ge) || !strings.Contains(err.Error(), "against "+base) {
		t.Errorf("a run with a misattributed error more: %v, want a regression against %s", err, base)
	}
	e.Run.Interrupted = true
	if err := Gate(c, bases, e, false); err == nil || errors.As(err, &ge) {
		t.Errorf("an interrupted current run: %v, want a plain error (nothing to judge)", err)
	}

	var me *results.MismatchError
	if _, _, _, err := Files([]string{otherFile}, cur, 0, false, tol); !errors.As(err, &me) || !strings.HasSuffix(err.Error(), "pass --force to compare them anyway") {
		t.Errorf("another workload's baseline: %v", err)
	}
	if c, _, _, err := Files([]string{otherFile}, cur, 0, true, tol); err != nil || !strings.Contains(c.Forced, "different experiments") {
		t.Errorf("forced: %v, forced %q", err, c.Forced)
	}
	failed := resultstest.Sample(t, 1, 1)
	failed.Run.Error = "target unreachable"
	if _, _, _, err := Files([]string{write("failed.json", failed)}, cur, 0, false, tol); !errors.As(err, &me) || !strings.HasPrefix(err.Error(), "no good baseline run among ") {
		t.Errorf("only a failed baseline: %v", err)
	}
}

// WriteJSON writes every row, and keeps '<' as it is (for Markdown readers of the JSON).
func TestWriteJSON(t *testing.T) {
	e := resultstest.RoundTrip(t, resultstest.Sample(t, 1, 1))
	c := Compare(results.Part{File: "a<b.json", Export: e}, results.Part{File: "c.json", Export: e}, gate.DefaultTolerances())
	var b bytes.Buffer
	if err := WriteJSON(&b, c); err != nil {
		t.Fatal(err)
	}
	var back Comparison
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Rows) != len(c.Rows) || !strings.Contains(b.String(), "a<b.json") {
		t.Errorf("WriteJSON: %d rows of %d, %v", len(back.Rows), len(c.Rows), err)
	}
}
