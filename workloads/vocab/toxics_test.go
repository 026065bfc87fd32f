package vocab

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestToxicsAreAllValidatable(t *testing.T) {
	want := []string{"idle_timeout", "latency", "reset_peer", "timeout", "bandwidth", "slicer", "limit_data", "down", "half_open"}
	if got := Toxics(); !slices.Equal(got, want) {
		t.Fatalf("Toxics() = %v, want %v", got, want)
	}
	Toxics()[0] = "mutated"
	if Toxics()[0] != "idle_timeout" {
		t.Fatal("Types returned its internal slice")
	}
}

func TestValidateToxic(t *testing.T) {
	type attrs = map[string]any
	tests := []struct {
		name    string
		typ     string
		attrs   attrs
		badAttr string // "" means valid
		msgHas  string
	}{
		{"idle_timeout int", "idle_timeout", attrs{"timeout": 30000}, "", ""},
		{"idle_timeout uint64", "idle_timeout", attrs{"timeout": uint64(100)}, "", ""},
		{"idle_timeout integral float", "idle_timeout", attrs{"timeout": 100.0}, "", ""},
		{"idle_timeout missing", "idle_timeout", nil, "timeout", "is required for idle_timeout"},
		{"idle_timeout zero", "idle_timeout", attrs{"timeout": 0}, "timeout", "positive integer number of milliseconds, e.g. 30000"},
		{"latency empty", "latency", nil, "", ""},
		{"latency both", "latency", attrs{"latency": int64(300), "jitter": 50}, "", ""},
		{"latency string", "latency", attrs{"latency": "300ms"}, "latency", `got the string "300ms"; must be a non-negative integer number of milliseconds, e.g. 300`},
		{"latency bool", "latency", attrs{"jitter": true}, "jitter", "got true"},
		{"latency fraction", "latency", attrs{"latency": 1.5}, "latency", "got 1.5"},
		{"latency negative", "latency", attrs{"latency": -1}, "latency", "got -1"},
		{"latency negative float", "latency", attrs{"jitter": -2.0}, "jitter", "got -2"},
		{"latency huge", "latency", attrs{"latency": uint64(1) << 63}, "latency", "got 9223372036854775808"},
		{"latency too long", "latency", attrs{"latency": int64(1) << 60}, "latency", "must be at most"},
		{"latency nil value", "latency", attrs{"latency": nil}, "latency", "got nothing"},
		{"latency list", "latency", attrs{"latency": []any{1}}, "latency", "got a []interface {}"},
		{"latency unknown attr", "latency", attrs{"latency": 1, "delay": 5}, "delay", "known attributes: latency, jitter"},
		{"reset_peer", "reset_peer", attrs{"timeout": 0}, "", ""},
		{"reset_peer empty", "reset_peer", nil, "", ""},
		{"timeout", "timeout", attrs{"timeout": 5000}, "", ""},
		{"timeout unknown", "timeout", attrs{"timout": 5000}, "timout", "known attributes: timeout"},
		{"bandwidth", "bandwidth", attrs{"rate": 100}, "", ""},
		{"bandwidth missing", "bandwidth", attrs{}, "rate", "is required for bandwidth: must be a positive integer rate in KB/s, e.g. 100"},
		{"bandwidth zero", "bandwidth", attrs{"rate": 0}, "rate", "positive"},
		{"slicer", "slicer", attrs{"average_size": 64, "size_variation": 32, "delay": 10}, "", ""},
		{"slicer only size", "slicer", attrs{"average_size": 1}, "", ""},
		{"slicer missing size", "slicer", attrs{"delay": 10}, "average_size", "is required for slicer"},
		{"slicer variation too big", "slicer", attrs{"average_size": 10, "size_variation": 10}, "size_variation", "smaller than average_size (10)"},
		{"limit_data", "limit_data", attrs{"bytes": 0}, "", ""},
		{"half_open default hold", "half_open", nil, "", ""},
		{"half_open hold", "half_open", attrs{"hold": 120000}, "", ""},
		{"half_open hold zero", "half_open", attrs{"hold": 0}, "hold", "positive integer number of milliseconds, e.g. 120000"},
		{"half_open hold as text", "half_open", attrs{"hold": "120s"}, "hold", `got the string "120s"`},
		{"half_open unknown", "half_open", attrs{"streams": 1}, "streams", "known attributes: hold"},
		{"limit_data missing", "limit_data", nil, "bytes", "is required for limit_data"},
		{"limit_data string", "limit_data", attrs{"bytes": "1k"}, "bytes", "non-negative integer number of bytes"},
		{"down", "down", nil, "", ""},
		{"down with attr", "down", attrs{"timeout": 1}, "timeout", "down takes no attributes"},
		{"unknown attrs reported first, sorted", "latency", attrs{"zz": 1, "aa": 1, "latency": "x"}, "aa", "known attributes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateToxic(tt.typ, tt.attrs)
			if tt.badAttr == "" {
				if err != nil {
					t.Fatalf("ValidateToxic(%q, %v) = %v, want nil", tt.typ, tt.attrs, err)
				}
				return
			}
			var ae *ToxicAttrError
			if !errors.As(err, &ae) {
				t.Fatalf("ValidateToxic(%q, %v) = %v, want *ToxicAttrError", tt.typ, tt.attrs, err)
			}
			if ae.Attr != tt.badAttr || !strings.Contains(ae.Msg, tt.msgHas) {
				t.Fatalf("got ToxicAttrError{%q, %q}, want attr %q and a message containing %q", ae.Attr, ae.Msg, tt.badAttr, tt.msgHas)
			}
		})
	}
}

func TestValidateToxicUnknownType(t *testing.T) {
	for _, typ := range []string{"", "noop", "slow_close", "Latency", "idle-timeout"} {
		err := ValidateToxic(typ, nil)
		var ue *UnknownToxicError
		if !errors.As(err, &ue) || ue.Type != typ {
			t.Fatalf("ValidateToxic(%q) = %v, want *UnknownToxicError", typ, err)
		}
		if !strings.Contains(err.Error(), "idle_timeout, latency") {
			t.Fatalf("error %q does not list the known types", err)
		}
	}
}
