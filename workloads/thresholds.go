package workloads

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/mcpchaos/mcpchaos/gate"
)

// The thresholds section: pass/fail conditions on the run's numbers, judged when it ends (and,
// with abort_on_fail, while it runs). An entry is an expression, or a mapping with the
// expression and abort_on_fail:
//
//	thresholds:
//	  - probe.misattributed_errors == 0
//	  - probe.probe_latency.p99 < 50ms
//	  - expr: overall.misattributed_errors < 10
//	    abort_on_fail: true
//
// The expression language belongs to the results package, which judges it; this file places
// its errors in the file and checks what only the workload knows (its groups).

var thresholdSchema = schema{keys: []schemaKey{
	{"expr", "write the threshold as SCOPE.METRIC OP VALUE, e.g. expr: probe.misattributed_errors == 0"},
	{"abort_on_fail", "set abort_on_fail: true to stop the run as soon as the threshold has failed for good"},
}}

const thresholdHint = "write SCOPE.METRIC OP VALUE, e.g. probe.probe_latency.p99 < 50ms"

func (d *decoder) thresholds(f *field, groups []GroupSpec, groupsOK bool) []gate.Threshold {
	entries, ok := d.list(f, maxListLen)
	if !ok {
		return nil
	}
	scopes := map[string]bool{"overall": true}
	var names []string
	for _, g := range groups {
		scopes[g.Name] = true
		names = append(names, g.Name)
	}
	var out []gate.Threshold
	seen := map[string]ast.Node{}
	for i, e := range entries {
		path := fmt.Sprintf("%s[%d]", f.path, i)
		th, node, ok := d.threshold(e, path)
		if !ok {
			continue
		}
		if groupsOK && !scopes[th.Scope] {
			d.errorf(node, path, "threshold %q is about group %q, which this workload does not have; %suse one of %s, or overall",
				th.Expr, th.Scope, gate.DidYouMean(th.Scope, names), strings.Join(names, ", "))
			continue
		}
		if prev, dup := seen[th.Expr]; dup {
			line, col := position(prev)
			d.errorf(node, path, "threshold %q is listed twice (first at %d:%d); remove one", th.Expr, line, col)
			continue
		}
		seen[th.Expr] = node
		out = append(out, th)
	}
	return out
}

// threshold decodes one entry; node is where its expression is written.
func (d *decoder) threshold(e ast.Node, path string) (gate.Threshold, ast.Node, bool) {
	v, ok := d.resolve(e)
	if !ok || isNil(v) {
		if ok {
			d.errorf(e, path, "is an empty entry; %s, or remove the lone \"-\"", thresholdHint)
		}
		return gate.Threshold{}, nil, false
	}
	var (
		exprField *field
		abort     bool
		abortAt   *field
	)
	if _, isMap := v.(*ast.MappingNode); isMap {
		m := d.mapping(e, path, &thresholdSchema)
		exprField = m.require("expr")
		if af := m.field("abort_on_fail"); af != nil {
			abort, _ = d.boolean(af)
			abortAt = af
		}
	} else {
		exprField = &field{path: path, node: v, hint: thresholdHint}
	}
	if exprField == nil {
		return gate.Threshold{}, nil, false
	}
	s, ok := d.str(exprField)
	if !ok {
		return gate.Threshold{}, nil, false
	}
	th, err := gate.ParseThreshold(s)
	if err != nil {
		var se *gate.ThresholdSyntaxError
		if !errors.As(err, &se) {
			d.errorf(exprField.node, exprField.path, "%v", err)
			return gate.Threshold{}, nil, false
		}
		line, col := position(exprField.node)
		if sn, isStr := exprField.node.(*ast.StringNode); isStr && !strings.Contains(s, "\n") {
			if sn.Token != nil && (sn.Token.Type == token.SingleQuoteType || sn.Token.Type == token.DoubleQuoteType) {
				col++ // the opening quote
			}
			col += se.Column() - 1
		}
		d.add(line, col, exprField.path, fmt.Sprintf("%s (in %q)", se.Msg, s))
		return gate.Threshold{}, nil, false
	}
	if abort {
		if err := th.EarlyError(); err != nil {
			d.errorf(abortAt.node, abortAt.path, "%v", err)
			return gate.Threshold{}, nil, false
		}
		th.AbortOnFail = true
	}
	return th, exprField.node, true
}
