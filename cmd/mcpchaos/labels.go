package main

import (
	"regexp"
	"strings"
	"unicode"
)

// labelKey is what a run label's key may be: a word a dashboard and a shell take as it is.
var labelKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,62}$`)

// parseLabels reads --label key=value flags: each key once, values printable and short.
func parseLabels(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		switch {
		case !ok:
			return nil, usagef("--label %q: want key=value, e.g. release=v1.4.2", f)
		case !labelKey.MatchString(k):
			return nil, usagef("--label %q: the key %q must start with a letter or _ and hold only letters, digits, _, . and - (at most 63)", f, k)
		case v == "" || len(v) > 200 || strings.IndexFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
			return nil, usagef("--label %q: the value must be 1 to 200 printable characters", f)
		}
		if old, dup := out[k]; dup {
			return nil, usagef("--label %s is given twice (%q and %q); give each key once", k, old, v)
		}
		out[k] = v
	}
	return out, nil
}
