package main

import (
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/workloads"
)

// --shard: its syntax is the flag's, its range the plan's; either way the error names the flag.
func TestParseShard(t *testing.T) {
	w, err := workloads.Builtin("seed-incident-fast")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in        string
		idx, n    int
		wantError string
	}{
		{"0/1", 0, 1, ""},
		{"3/4", 3, 4, ""},
		{" 1 / 2 ", 1, 2, ""},
		{"4/4", 0, 0, "must be between 0 and 3"},
		{"-1/4", 0, 0, "must be between 0 and 3"},
		{"1/0", 0, 0, "between 1 and 10000"},
		{"1/10001", 0, 0, "between 1 and 10000"},
		{"1", 0, 0, "want INDEX/COUNT"},
		{"a/b", 0, 0, "want INDEX/COUNT"},
	} {
		fl := runFlags{progress: "off", shard: tc.in}
		plan, err := fl.plan(w)
		switch {
		case tc.wantError == "" && err != nil:
			t.Errorf("--shard %q: %v", tc.in, err)
		case tc.wantError == "" && (plan.Shard().Index != tc.idx || plan.Shard().Count != tc.n):
			t.Errorf("--shard %q: %+v", tc.in, plan.Shard())
		case tc.wantError != "" && (err == nil || !strings.Contains(err.Error(), tc.wantError) || !strings.Contains(err.Error(), "--shard") || exitCode(err) != exitUsage):
			t.Errorf("--shard %q: %v (exit %d), want a usage error about --shard saying %q", tc.in, err, exitCode(err), tc.wantError)
		}
	}
}
