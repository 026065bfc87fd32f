package vocab

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// ToxicDown is the fault that takes a whole proxy away for its window: the
// listener is closed and open connections are cut, like a proxy restart or an
// outage; afterwards the proxy listens again on the same address.
const ToxicDown = "down"

// ToxicHalfOpen is the zombie stream: when it starts, the fault proxy resets the client's side
// of each open standalone GET stream (the client sees ECONNRESET) and keeps the server's side
// open for hold milliseconds, so the server still believes the stream is attached and may
// refuse the client's reconnect.
const ToxicHalfOpen = "half_open"

// HalfOpenHold is how long half_open keeps the server's side open when hold is not given: the
// 120 s a hosting platform was reported to refuse a reconnect for.
const HalfOpenHold = 120_000

// attrSpec describes one integer attribute of a fault type.
type attrSpec struct {
	name     string
	unit     string // "milliseconds", "microseconds", "KB/s", "bytes"
	example  int64
	required bool
	min      int64 // smallest accepted value
	max      int64 // largest accepted value; keeps Toxiproxy's arithmetic from overflowing
}

const (
	maxMillis = math.MaxInt64 / 1_000_000 // time.Duration(ms) * time.Millisecond must not overflow
	maxMicros = math.MaxInt64 / 1_000
)

func ms(name string, example int64) attrSpec {
	return attrSpec{name: name, unit: "milliseconds", example: example, max: maxMillis}
}

func required(a attrSpec, least int64) attrSpec {
	a.required = true
	a.min = least
	return a
}

// faultTypes maps each fault type a workload may name to its attributes, in
// the order they are documented. Toxiproxy's own types keep Toxiproxy's
// attribute names so its documentation applies unchanged.
var faultTypes = map[string][]attrSpec{
	"idle_timeout": {required(ms("timeout", 30000), 1)},
	"latency":      {ms("latency", 300), ms("jitter", 50)},
	"reset_peer":   {ms("timeout", 0)},
	"timeout":      {ms("timeout", 0)},
	// A rate of 0 makes Toxiproxy's bandwidth toxic spin forever on empty
	// chunks, so at least 1 KB/s is required.
	"bandwidth": {required(attrSpec{name: "rate", unit: "KB/s", example: 100, max: math.MaxInt64 / 1024}, 1)},
	// Toxiproxy's slicer recurses forever when average_size is 0 and slices
	// out of range when size_variation is not below average_size.
	"slicer": {
		required(attrSpec{name: "average_size", unit: "bytes", example: 64, max: math.MaxInt32}, 1),
		{name: "size_variation", unit: "bytes", example: 32, max: math.MaxInt32},
		{name: "delay", unit: "microseconds", example: 10, max: maxMicros},
	},
	"limit_data": {required(attrSpec{name: "bytes", unit: "bytes", example: 4096, max: math.MaxInt64}, 0)},
	ToxicDown:    {},
	// hold: how long the server's side stays open (HalfOpenHold when not given).
	ToxicHalfOpen: {{name: "hold", unit: "milliseconds", example: HalfOpenHold, min: 1, max: maxMillis}},
}

// typeOrder is the documented order of Toxics.
var typeOrder = []string{"idle_timeout", "latency", "reset_peer", "timeout", "bandwidth", "slicer", "limit_data", ToxicDown, ToxicHalfOpen}

// Toxics lists the fault types a workload may name: "idle_timeout", "latency",
// "reset_peer", "timeout", "bandwidth", "slicer", "limit_data", "down" and "half_open".
func Toxics() []string {
	return append([]string(nil), typeOrder...)
}

// UnknownToxicError reports a fault type that is not one of Toxics.
type UnknownToxicError struct {
	Type string
}

func (e *UnknownToxicError) Error() string {
	return fmt.Sprintf("unknown fault type %q: use one of %s", e.Type, strings.Join(typeOrder, ", "))
}

// ToxicAttrError reports a fault attribute that is unknown, missing or has a bad
// value. Msg says what is wrong and what to do about it.
type ToxicAttrError struct {
	Attr string
	Msg  string
}

func (e *ToxicAttrError) Error() string {
	return fmt.Sprintf("attribute %q: %s", e.Attr, e.Msg)
}

// ValidateToxic checks a fault's type and attributes before anything starts.
// Attribute values are decoded YAML or JSON numbers (any Go integer type, or
// a float64 with an integral value). It returns *UnknownToxicError or
// *ToxicAttrError; with several problems it reports unknown attributes first, then
// the first bad or missing attribute in documented order.
func ValidateToxic(typ string, attrs map[string]any) error {
	specs, ok := faultTypes[typ]
	if !ok {
		return &UnknownToxicError{Type: typ}
	}
	names := make([]string, 0, len(attrs))
	for name := range attrs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if specFor(specs, name) == nil {
			return &ToxicAttrError{Attr: name, Msg: unknownAttrMsg(typ, specs)}
		}
	}
	values := make(map[string]int64, len(specs))
	for _, s := range specs {
		raw, present := attrs[s.name]
		if !present {
			if s.required {
				return &ToxicAttrError{Attr: s.name, Msg: fmt.Sprintf("is required for %s: %s", typ, s.want())}
			}
			continue
		}
		v, ok := Integer(raw)
		if !ok || v < s.min {
			return &ToxicAttrError{Attr: s.name, Msg: fmt.Sprintf("got %s; %s", describe(raw), s.want())}
		}
		if v > s.max {
			return &ToxicAttrError{Attr: s.name, Msg: fmt.Sprintf("got %d; must be at most %d %s", v, s.max, s.unit)}
		}
		values[s.name] = v
	}
	if typ == "slicer" && values["size_variation"] >= values["average_size"] {
		return &ToxicAttrError{Attr: "size_variation", Msg: fmt.Sprintf(
			"got %d; must be smaller than average_size (%d), e.g. half of it", values["size_variation"], values["average_size"])}
	}
	return nil
}

func specFor(specs []attrSpec, name string) *attrSpec {
	for i := range specs {
		if specs[i].name == name {
			return &specs[i]
		}
	}
	return nil
}

func unknownAttrMsg(typ string, specs []attrSpec) string {
	if len(specs) == 0 {
		return fmt.Sprintf("%s takes no attributes; remove it", typ)
	}
	known := make([]string, len(specs))
	for i, s := range specs {
		known[i] = s.name
	}
	return fmt.Sprintf("is not an attribute of %s; known attributes: %s", typ, strings.Join(known, ", "))
}

func (s attrSpec) want() string {
	kind := "a non-negative integer"
	if s.min == 1 {
		kind = "a positive integer"
	}
	number := "number of " + s.unit
	if s.unit == "KB/s" {
		number = "rate in KB/s"
	}
	return fmt.Sprintf("must be %s %s, e.g. %d", kind, number, s.example)
}

// Integer returns an attribute's value v as an int64 if it is an integer-valued number.
func Integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint:
		return fromUint(uint64(n))
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		return fromUint(n)
	case float32:
		return fromFloat(float64(n))
	case float64:
		return fromFloat(n)
	}
	return 0, false
}

func fromUint(n uint64) (int64, bool) {
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

func fromFloat(f float64) (int64, bool) {
	// 2^63 is exactly representable; anything at or above it does not fit.
	if f != math.Trunc(f) || math.IsInf(f, 0) || f >= 1<<63 || f < -(1<<63) {
		return 0, false
	}
	return int64(f), true
}

// describe names a bad value for an error message.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("%t", x)
	case float32, float64, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprintf("%v", x)
	}
	return fmt.Sprintf("a %T", v)
}
