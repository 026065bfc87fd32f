package live

import (
	"strings"
	"testing"
)

// A run label pushed as a series label may not take one mcpchaos sets, nor become another
// run label's once '.' and '-' are '_'.
func TestCheckSeriesLabels(t *testing.T) {
	if err := CheckSeriesLabels(map[string]string{"release": "v1", "git.commit": "3f2a"}); err != nil {
		t.Errorf("distinct labels: %v", err)
	}
	if err := CheckSeriesLabels(map[string]string{"run-id": "x"}); err == nil || !strings.Contains(err.Error(), `the series label "run_id", which mcpchaos sets itself`) {
		t.Errorf("run-id: %v", err)
	}
	if err := CheckSeriesLabels(map[string]string{"a.b": "1", "a-b": "2"}); err == nil || !strings.Contains(err.Error(), `both become the series label "a_b"`) {
		t.Errorf("a.b and a-b: %v", err)
	}
}
