package words

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{
		{0, "0 regressions"},
		{1, "1 regression"},
		{2, "2 regressions"},
		{-1, "-1 regressions"},
	} {
		if got := Count(c.n, "regression"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
