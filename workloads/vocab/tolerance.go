package vocab

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Tolerance is the range a steady-state probe's value must stay in (a probe's `tolerance`; a
// compare's tolerances are package gate's), written as
//
//	value OP NUMBER         OP one of < <= == != >= >   (e.g. value <= 5, value == 0)
//	within N% of before     relative to the probe's own value before the faults
//	within N of before      the same, as an absolute difference
//
// "before" is the value the same probe observed in its before run; a tolerance that names it
// needs the probe to run before.
type Tolerance struct {
	Op     string  // a comparison; "" for a within tolerance
	Value  float64 // the number compared with
	Within float64 // the allowed difference from before (a fraction when Percent)
	// Percent says Within is relative (10% is 0.10).
	Percent bool
	Expr    string // as written, normalised
}

var ops = []string{"<=", ">=", "==", "!=", "<", ">"}

// ParseTolerance reads a tolerance; the error says what is wrong and how to write one.
func ParseTolerance(s string) (Tolerance, error) {
	f := strings.Fields(s)
	const how = `write "value <= 5" (a comparison: < <= == != >= >) or "within 10% of before"`
	switch {
	case len(f) == 3 && f[0] == "value":
		if !contains(ops, f[1]) {
			return Tolerance{}, fmt.Errorf("tolerance %q: %q is not a comparison; %s", s, f[1], how)
		}
		v, err := number(f[2])
		if err != nil {
			return Tolerance{}, fmt.Errorf("tolerance %q: %q is not a number; %s", s, f[2], how)
		}
		return Tolerance{Op: f[1], Value: v, Expr: strings.Join(f, " ")}, nil
	case len(f) == 4 && f[0] == "within" && f[2] == "of" && f[3] == "before":
		n, pct := strings.CutSuffix(f[1], "%")
		v, err := number(n)
		if err != nil || v < 0 {
			return Tolerance{}, fmt.Errorf("tolerance %q: %q is not a number of at least 0; %s", s, f[1], how)
		}
		t := Tolerance{Within: v, Percent: pct, Expr: strings.Join(f, " ")}
		if pct {
			t.Within = v / 100
		}
		return t, nil
	}
	return Tolerance{}, fmt.Errorf("tolerance %q: %s", s, how)
}

func number(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("not a finite number")
	}
	return v, nil
}

// NeedsBefore says the tolerance is relative to the probe's before value.
func (t Tolerance) NeedsBefore() bool { return t.Op == "" }

// String is the tolerance as written.
func (t Tolerance) String() string { return t.Expr }

// Judge says whether v is within the tolerance; before is the probe's before value (nil when
// it has none). why says, when it is not, by how much.
func (t Tolerance) Judge(v float64, before *float64) (ok bool, why string) {
	if math.IsNaN(v) {
		return false, "the value is NaN"
	}
	if t.Op != "" {
		ok := compare(v, t.Op, t.Value)
		if !ok {
			return false, fmt.Sprintf("%s is not %s %s", format(v), t.Op, format(t.Value))
		}
		return true, ""
	}
	if before == nil {
		return false, "there is no before value to compare with (the before run failed or did not run)"
	}
	allowed := t.Within
	if t.Percent {
		allowed = t.Within * math.Abs(*before)
	}
	if d := math.Abs(v - *before); d > allowed {
		return false, fmt.Sprintf("%s differs from before (%s) by %s, more than %s", format(v), format(*before), format(d), t.Expr[len("within "):strings.Index(t.Expr, " of")])
	}
	return true, ""
}

func compare(v float64, op string, x float64) bool {
	switch op {
	case "<":
		return v < x
	case "<=":
		return v <= x
	case "==":
		return v == x
	case "!=":
		return v != x
	case ">=":
		return v >= x
	case ">":
		return v > x
	}
	return false
}

func format(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
