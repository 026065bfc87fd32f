package workloads

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseStatuses reads a group's dead statuses written on one line, comma-separated (run
// --dead-statuses 400,404): HTTP statuses, 100 to 599, a repeat kept once.
func ParseStatuses(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 || n > 599 {
			return nil, fmt.Errorf("%q is not an HTTP status between 100 and 599", strings.TrimSpace(f))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}
