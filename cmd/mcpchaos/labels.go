package main

import (
	"strings"
)

// parseLabels reads --label key=value flags, each key once. What a key and a value may be is
// engine.NewPlan's to check (the labels field of its error, said of --label).
func parseLabels(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, usagef("--label %q: want key=value, e.g. release=v1.4.2", f)
		}
		if old, dup := out[k]; dup {
			return nil, usagef("--label %s is given twice (%q and %q); give each key once", k, old, v)
		}
		out[k] = v
	}
	return out, nil
}
