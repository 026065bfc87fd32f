package gate

import (
	"errors"
	"fmt"
	"os"

	"github.com/goccy/go-yaml"
)

// ReadTolerances reads a tolerance file (compare --tolerances): a YAML mapping of PATTERN:
// SPEC, applied in order; an error names the file.
//
//	probe_latency.p99: +20%
//	naive.*: info
//	misattributed_errors: +0
func ReadTolerances(path string) ([]ToleranceRule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, errors.Unwrap(err))
	}
	var ms yaml.MapSlice
	if err := yaml.Unmarshal(data, &ms); err != nil {
		return nil, fmt.Errorf("%s: not a YAML mapping of PATTERN: SPEC (%v)", path, err)
	}
	var rules []ToleranceRule
	for _, it := range ms {
		pattern := fmt.Sprint(it.Key)
		spec := fmt.Sprint(it.Value)
		if it.Value == nil {
			spec = ""
		}
		r, err := ParseToleranceRule(pattern, spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", path, pattern, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}
