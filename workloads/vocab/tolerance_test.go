package vocab

import (
	"strings"
	"testing"
)

func TestTolerance(t *testing.T) {
	b := func(v float64) *float64 { return &v }
	cases := []struct {
		expr   string
		v      float64
		before *float64
		ok     bool
	}{
		{"value <= 5", 5, nil, true},
		{"value <= 5", 5.01, nil, false},
		{"value < 5", 5, nil, false},
		{"value == 0", 0, nil, true},
		{"value != 0", 0, nil, false},
		{"value >= 1e9", 2e9, nil, true},
		{"value > -1", -1, nil, false},
		{"within 10% of before", 110, b(100), true},
		{"within 10% of before", 111, b(100), false},
		{"within 10% of before", 89, b(100), false},
		{"within 10% of before", -95, b(-100), true},
		{"within 3 of before", 13, b(10), true},
		{"within 3 of before", 6.5, b(10), false},
		{"within 0% of before", 0, b(0), true},
		{"within 10% of before", 1, nil, false},
	}
	for _, c := range cases {
		tol, err := ParseTolerance(c.expr)
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		ok, why := tol.Judge(c.v, c.before)
		if ok != c.ok || ok != (why == "") {
			t.Errorf("%q on %v (before %v): ok %v why %q, want ok %v", c.expr, c.v, c.before, ok, why, c.ok)
		}
	}
}

func TestToleranceRefused(t *testing.T) {
	for _, s := range []string{"", "value", "value =< 5", "value <= five", "value <= NaN", "value <= Inf",
		"within -5% of before", "within 10% of after", "within x of before", "5 >= value", "value <= 5 or so"} {
		_, err := ParseTolerance(s)
		if err == nil || !strings.Contains(err.Error(), `write "value <= 5"`) {
			t.Errorf("ParseTolerance(%q) = %v, want an error saying how to write one", s, err)
		}
	}
}

func TestAllowedHost(t *testing.T) {
	for _, c := range []struct {
		url, target string
		ok          bool
	}{
		{"http://127.0.0.1:9090", "", true},
		{"http://127.8.0.3/x", "", true},
		{"http://[::1]:9090", "", true},
		{"http://localhost:9090", "", true},
		{"http://prometheus.monitoring:9090", "", false},
		{"http://10.0.0.1:9090", "", false},
		{"https://staging.example.com/healthz", "staging.example.com", true},
		{"https://STAGING.example.com/healthz", "staging.example.com", true},
		{"https://other.example.com/healthz", "staging.example.com", false},
		{"not a url", "", false},
	} {
		msg := AllowedHost(c.url, c.target)
		if (msg == "") != c.ok {
			t.Errorf("AllowedHost(%q, %q) = %q, want allowed %v", c.url, c.target, msg, c.ok)
		}
	}
}
