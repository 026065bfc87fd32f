package main

import (
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in        string
		idx, n    int
		wantError bool
	}{
		{"0/1", 0, 1, false},
		{"3/4", 3, 4, false},
		{" 1 / 2 ", 1, 2, false},
		{"4/4", 0, 0, true},
		{"-1/4", 0, 0, true},
		{"1/0", 0, 0, true},
		{"1", 0, 0, true},
		{"a/b", 0, 0, true},
	} {
		s, err := parseShard(tc.in)
		if (err != nil) != tc.wantError || (err == nil && (s.Index != tc.idx || s.Count != tc.n)) {
			t.Errorf("parseShard(%q) = %+v, %v", tc.in, s, err)
		}
	}
}
