package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/inspect"
	"github.com/mcpchaos/mcpchaos/workloads"
	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// groupFlags tell every group of any workload, built-in or not, what the server needs: the
// tool to call and its arguments, the probe, the statuses that mean a dead session; or all of
// what inspect found (--from-inspect), which the other flags then override.
type groupFlags struct {
	tool          string
	toolArgs      string
	probe         string
	deadStatuses  string
	fromInspect   string
	noSchemaCheck bool
	set           func(name string) bool
}

func (gf *groupFlags) register(f *pflag.FlagSet) {
	f.StringVar(&gf.tool, "tool", "", "the tool every group calls, in place of the workload's (a tool the server does not offer is an error at start)")
	f.StringVar(&gf.toolArgs, "tool-args", "", `the arguments of every group's tool call, a JSON object, e.g. '{"steps": 3}' (placeholders {{client}}, {{seq}}, {{group}} as in a workload)`)
	f.StringVar(&gf.probe, "probe", "", "the probe every group sends after a replay: ping or tools/list")
	f.StringVar(&gf.deadStatuses, "dead-statuses", "", "the statuses that mean a dead session for every group, comma-separated, e.g. 400,404")
	f.StringVar(&gf.fromInspect, "from-inspect", "", "take inspect's findings from its JSON (inspect --json FILE): the tool that yielded cursors, the probe and the dead statuses it advises")
	f.BoolVar(&gf.noSchemaCheck, "no-schema-check", false, "send the workload's tool arguments without checking them against the tool's inputSchema first (for servers whose schema lies)")
	gf.set = f.Changed
}

// options are the flags as plan options, checked (usage errors, exit 2), and the ttl_mode
// inspect found (--from-inspect; "" when it could not tell), which is the target's to apply.
func (gf *groupFlags) options() ([]engine.PlanOption, string, error) {
	if gf.set == nil {
		return nil, "", nil
	}
	var o engine.GroupOverrides
	var ttlMode string
	if gf.set("from-inspect") {
		var err error
		if ttlMode, err = fromInspect(gf.fromInspect, &o); err != nil {
			return nil, "", err
		}
	}
	if gf.set("tool") {
		if strings.TrimSpace(gf.tool) == "" {
			return nil, "", usagef("--tool is empty; name a tool the server offers")
		}
		o.Tool = gf.tool
	}
	if gf.set("tool-args") {
		if err := json.Unmarshal([]byte(gf.toolArgs), &o.Arguments); err != nil || o.Arguments == nil {
			return nil, "", usagef(`--tool-args %q: want a JSON object, e.g. '{"steps": 3}'`, clipFlag(gf.toolArgs))
		}
	}
	if gf.set("probe") {
		if !slices.Contains(vocab.ProbeMethods(), gf.probe) {
			return nil, "", usagef("--probe %q: want one of %s", gf.probe, strings.Join(vocab.ProbeMethods(), ", "))
		}
		o.Probe = gf.probe
	}
	if gf.set("dead-statuses") {
		st, err := workloads.ParseStatuses(gf.deadStatuses)
		if err != nil {
			return nil, "", usagef("--dead-statuses %q: %v", gf.deadStatuses, err)
		}
		o.DeadStatuses = st
	}
	var opts []engine.PlanOption
	if o.Tool != "" || o.Arguments != nil || o.Probe != "" || o.DeadStatuses != nil {
		opts = append(opts, engine.WithGroupOverrides(o))
	}
	if gf.noSchemaCheck {
		opts = append(opts, engine.WithNoSchemaCheck())
	}
	return opts, ttlMode, nil
}

// fromInspect reads inspect's JSON into o: the tool whose replies gave the cursors, the
// probe and the dead statuses of its verdict; and it returns how the server's TTL counts, when
// inspect could tell (ttl_mode, with --ttl).
func fromInspect(path string, o *engine.GroupOverrides) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", usagef("--from-inspect: %v", err)
	}
	var fp inspect.Fingerprint
	if err := json.Unmarshal(b, &fp); err != nil {
		return "", usagef("--from-inspect %s: not the JSON of mcpchaos inspect --json: %v", path, err)
	}
	a := fp.Advice()
	o.Tool, o.Probe = a.Tool, a.Probe
	if len(a.DeadStatuses) > 0 {
		o.DeadStatuses = a.DeadStatuses
	}
	return a.TTLMode, nil // "" when inspect could not tell: the workload's stands
}

func clipFlag(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
