package main

import "testing"

func TestCheckMetricsAddr(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		public bool
		ok     bool
	}{
		{"127.0.0.1:9464", false, true},
		{"localhost:9464", false, true},
		{"[::1]:9464", false, true},
		{"0.0.0.0:9464", false, false},
		{"0.0.0.0:9464", true, true},
		{"10.0.0.1:9464", false, false},
		{"9464", false, false},
	} {
		if err := checkMetricsAddr(tc.addr, tc.public); (err == nil) != tc.ok {
			t.Errorf("checkMetricsAddr(%q, %v) = %v", tc.addr, tc.public, err)
		}
	}
}
