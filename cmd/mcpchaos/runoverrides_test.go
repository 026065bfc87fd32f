package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// The group flags override every group of a built-in workload; --from-inspect takes inspect's
// tool, probe and dead statuses, and the other flags override it; bad values are usage errors.
func TestGroupFlags(t *testing.T) {
	w, err := workloads.Builtin("seed-incident-fast")
	if err != nil {
		t.Fatal(err)
	}
	fp := filepath.Join(t.TempDir(), "fp.json")
	os.WriteFile(fp, []byte(`{"url":"http://x/mcp","cursor_via":"a tools/call report_progress reply, sent with a progress token",
		"verdict":{"hazards":[],"probe":"tools/list","dead_statuses":[400,404]}}`), 0o600)
	plan := func(set map[string]string) (*workloads.Workload, error) {
		gf := groupFlags{tool: set["tool"], toolArgs: set["tool-args"], probe: set["probe"], deadStatuses: set["dead-statuses"], fromInspect: set["from-inspect"]}
		gf.set = func(n string) bool { _, ok := set[n]; return ok }
		opts, _, err := gf.options()
		if err != nil {
			return nil, err
		}
		// Against a server by URL: the reference server's tools are echo and slow only.
		opts = append(opts, engine.WithTarget(workloads.Target{URL: "http://127.0.0.1:1/mcp", SessionTTL: 3 * time.Second, Where: "--target"}))
		p, err := engine.NewPlan(w, opts...)
		if err != nil {
			return nil, err
		}
		return p.Workload(), nil
	}
	got, err := plan(map[string]string{"from-inspect": fp, "probe": "ping"})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got.Groups {
		if g.Tool != "report_progress" || g.ToolWhere != "--tool" || g.Probe != "ping" || !slices.Equal(g.DeadStatuses, []int{400, 404}) {
			t.Errorf("group %s: tool %q (%s) probe %q dead %v", g.Name, g.Tool, g.ToolWhere, g.Probe, g.DeadStatuses)
		}
	}
	got, err = plan(map[string]string{"tool": "lookup_order", "tool-args": `{"order_id": "o-{{seq}}"}`, "dead-statuses": "400, 404,400"})
	if err != nil {
		t.Fatal(err)
	}
	if g := got.Groups[1]; g.Arguments["order_id"] != "o-{{seq}}" || !slices.Equal(g.DeadStatuses, []int{400, 404}) {
		t.Errorf("group %+v", g)
	}
	for flag, bad := range map[string]string{"probe": "initialize", "dead-statuses": "404,abc", "tool-args": "[1]", "tool": " ", "from-inspect": "/nonexistent.json"} {
		_, err := plan(map[string]string{flag: bad})
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "--"+flag) {
			t.Errorf("--%s %q: %v (exit %d), want a usage error naming the flag", flag, bad, err, exitCode(err))
		}
	}
}

// --session-ttl takes a duration or none; anything else is a usage error.
func TestSessionTTLFlag(t *testing.T) {
	w, _ := workloads.Builtin("seed-incident-fast")
	tf := flags(map[string]string{"target": "http://127.0.0.1:1/mcp", "session-ttl": ""})
	tf.sessionTTL = "none"
	w2, err := applyTarget(tf, w)
	if err != nil || !w2.Target.NoSessionTTL || w2.Target.SessionTTL != 0 {
		t.Fatalf("--session-ttl none: %v %+v", err, w2.Target)
	}
	for _, bad := range []string{"0s", "-1s", "forever"} {
		tf.sessionTTL = bad
		if _, err := applyTarget(tf, w); exitCode(err) != exitUsage || !strings.Contains(err.Error(), "none") {
			t.Errorf("--session-ttl %s: %v", bad, err)
		}
	}
}

// How a URL target's TTL counts: --ttl-mode says it, --from-inspect carries what inspect found
// (ttl_mode) unless --ttl-mode says otherwise; a bad value or a built-in target is a usage error.
func TestTTLModeFlags(t *testing.T) {
	w, err := workloads.Builtin("seed-incident-fast")
	if err != nil {
		t.Fatal(err)
	}
	fp := filepath.Join(t.TempDir(), "fp.json")
	if err := os.WriteFile(fp, []byte(`{"url":"http://x/mcp","ttl_mode":"absolute","verdict":{"hazards":[],"probe":"ping"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	mode := func(set map[string]string) (string, error) {
		fl := runFlags{progress: "off", formats: "none"}
		fl.target = targetFlags{url: set["target"], sessionTTL: "3s", ttlMode: set["ttl-mode"]}
		fl.target.set = func(n string) bool { _, ok := set[n]; return ok || (n == "session-ttl" && set["target"] != "") }
		fl.groups = groupFlags{fromInspect: set["from-inspect"]}
		fl.groups.set = func(n string) bool { _, ok := set[n]; return ok }
		p, err := fl.plan(w)
		if err != nil {
			return "", err
		}
		return p.Workload().Target.TTLMode, nil
	}
	const url = "http://127.0.0.1:1/mcp"
	for _, c := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"target": url}, ""},
		{map[string]string{"target": url, "from-inspect": fp}, "absolute"},
		{map[string]string{"target": url, "from-inspect": fp, "ttl-mode": "sliding"}, "sliding"},
		{map[string]string{"target": url, "ttl-mode": "absolute"}, "absolute"},
	} {
		got, err := mode(c.set)
		if err != nil || got != c.want {
			t.Errorf("%v: ttl_mode %q (%v), want %q", c.set, got, err, c.want)
		}
	}
	for set, says := range map[string]map[string]string{
		`--ttl-mode "forever": want sliding or absolute`: {"target": url, "ttl-mode": "forever"},
		"add --target URL": {"ttl-mode": "absolute"},
	} {
		if _, err := mode(says); err == nil || !strings.Contains(err.Error(), set) {
			t.Errorf("%v: %v, want a usage error saying %q", says, err, set)
		}
	}
}
