package workloads

import (
	"slices"
	"testing"
)

// Statuses on one line: spaces allowed, a repeat kept once, anything but 100 to 599 refused.
func TestParseStatuses(t *testing.T) {
	got, err := ParseStatuses("400, 404,400")
	if err != nil || !slices.Equal(got, []int{400, 404}) {
		t.Errorf("ParseStatuses = %v, %v", got, err)
	}
	for _, bad := range []string{"", "99", "600", "404,x"} {
		if _, err := ParseStatuses(bad); err == nil {
			t.Errorf("%q passed", bad)
		}
	}
}
