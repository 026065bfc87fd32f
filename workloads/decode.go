package workloads

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// The decoder walks the YAML syntax tree itself instead of unmarshalling into
// structs: that is what lets it report every problem (not just the first),
// each at the line and column of the key or value at fault.

type decoder struct {
	errorList
	aliases map[*ast.AliasNode]ast.Node // alias → anchored node; nil: broken alias, already reported
	checked map[onceKey]bool

	urlTarget bool   // the target is a real server by URL: groups may call any tool
	noTTL     string // why "ttl" cannot be resolved, when the target declares no TTL
	replicas  int    // the built-in target's replicas: what a restart may name

	phaseNames   []string // the phases' names, decoded before the groups (churn.during names them)
	clientsWhere []string // file:line:col of each group's clients (Workload.clientsWhere)
}

type onceKey struct {
	node ast.Node
	as   any
}

// once reports whether this is the first time node is checked as what. A
// node reached through many aliases is reported on once, and checking it
// again would only cost time (a hostile file can reach one node a million
// times).
func (d *decoder) once(node ast.Node, as any) bool {
	k := onceKey{node, as}
	if d.checked[k] {
		return false
	}
	if d.checked == nil {
		d.checked = map[onceKey]bool{}
	}
	d.checked[k] = true
	return true
}

// errorf records an error positioned at n.
func (d *decoder) errorf(n ast.Node, field, format string, args ...any) {
	line, col := position(n)
	d.add(line, col, field, fmt.Sprintf(format, args...))
}

// position is the 1-based line and column where n starts in the file; 1:1
// when n carries no position.
// where is file:line:col of a node, for errors found when the run starts.
func (d *decoder) where(n ast.Node) string {
	line, col := position(n)
	return fmt.Sprintf("%s:%d:%d", d.file, line, col)
}

func position(n ast.Node) (int, int) {
	if isNil(n) {
		return 1, 1
	}
	switch v := n.(type) {
	case *ast.MappingNode:
		// A block mapping's token is the first ':'; its first key is where a
		// reader looks.
		if !v.IsFlowStyle && len(v.Values) > 0 {
			return position(v.Values[0])
		}
	case *ast.MappingValueNode:
		if !isNil(v.Key) {
			return position(v.Key)
		}
	case *ast.DocumentNode:
		if v.Start != nil && v.Start.Position != nil {
			return v.Start.Position.Line, v.Start.Position.Column
		}
		return position(v.Body)
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil || tk.Position.Line < 1 {
		return 1, 1
	}
	col := tk.Position.Column
	if col < 1 {
		col = 1
	}
	return tk.Position.Line, col
}

func isNil(n ast.Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// collectAliases resolves every alias in the tree to the node of the anchor
// it names, following YAML's rule that an alias refers to the most recent
// preceding anchor of that name. An alias to an anchor that is still open
// (the alias sits inside the anchored node) would make a cycle; it is
// reported, as is an alias to an anchor never defined.
func (d *decoder) collectAliases(root ast.Node) {
	d.aliases = map[*ast.AliasNode]ast.Node{}
	latest := map[string]*ast.AnchorNode{}
	done := map[*ast.AnchorNode]bool{}
	var walk func(n ast.Node, path string)
	walk = func(n ast.Node, path string) {
		if isNil(n) {
			return
		}
		switch v := n.(type) {
		case *ast.AnchorNode:
			name := nodeText(v.Name)
			latest[name] = v
			walk(v.Value, path)
			done[v] = true
		case *ast.AliasNode:
			name := nodeText(v.Value)
			a := latest[name]
			switch {
			case a == nil:
				d.errorf(v, path, "alias *%s names no anchor defined before it; define &%s first, or write the value out", name, name)
				d.aliases[v] = nil
			case !done[a]:
				d.errorf(v, path, "alias *%s is inside the node anchored as &%s, which would repeat forever; remove the alias", name, name)
				d.aliases[v] = nil
			default:
				d.aliases[v] = a.Value
			}
		case *ast.TagNode:
			walk(v.Value, path)
		case *ast.MappingNode:
			for _, mv := range v.Values {
				walk(mv, path)
			}
		case *ast.MappingValueNode:
			walk(v.Key, path)
			key := nodeText(v.Key)
			if path != "" {
				key = path + "." + key
			}
			walk(v.Value, key)
		case *ast.MappingKeyNode:
			walk(v.Value, path)
		case *ast.SequenceNode:
			for i, e := range v.Values {
				walk(e, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(root, "")
}

// resolve is the node n stands for: anchors and tags unwrapped, aliases
// followed. ok is false for a broken alias (already reported). A "!!str" tag
// turns a scalar into the string it is written as.
func (d *decoder) resolve(n ast.Node) (ast.Node, bool) {
	for range 64 { // aliases are acyclic (collectAliases); the bound is a backstop
		if isNil(n) {
			return nil, true
		}
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.MappingKeyNode: // an explicit "? key"
			n = v.Value
		case *ast.AliasNode:
			t := d.aliases[v]
			if isNil(t) {
				return nil, false
			}
			n = t
		case *ast.TagNode:
			if v.Start != nil && v.Start.Value == "!!str" {
				if s, ok := asStringScalar(v.Value); ok {
					return s, true
				}
			}
			n = v.Value
		default:
			return n, true
		}
	}
	return nil, false
}

func asStringScalar(n ast.Node) (*ast.StringNode, bool) {
	switch n.(type) {
	case *ast.StringNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode, *ast.InfinityNode, *ast.NanNode:
		tk := n.GetToken()
		if tk == nil {
			return nil, false
		}
		return &ast.StringNode{BaseNode: &ast.BaseNode{}, Token: tk, Value: tk.Value}, true
	}
	return nil, false
}

// nodeText is the text of a scalar node as written (for names and keys).
func nodeText(n ast.Node) string {
	switch v := n.(type) {
	case *ast.StringNode:
		if v != nil {
			return v.Value
		}
	default:
		if !isNil(n) {
			if tk := n.GetToken(); tk != nil {
				return tk.Value
			}
		}
	}
	return ""
}

// describe names a value for "got ..." in an error message.
func describe(n ast.Node) string {
	if isNil(n) {
		return "nothing"
	}
	switch v := n.(type) {
	case *ast.StringNode:
		return fmt.Sprintf("the string %q", v.Value)
	case *ast.LiteralNode:
		return "a block of text"
	case *ast.NullNode:
		return "nothing"
	case *ast.MappingNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return nodeText(n)
	}
	return "a " + strings.ToLower(strings.TrimSuffix(fmt.Sprintf("%v", n.Type()), "Type"))
}

// field is one key of a mapping that is present with a non-null value.
type field struct {
	path string   // e.g. "groups[1].clients"
	key  ast.Node // for errors about the key
	node ast.Node // the resolved value; nil for a broken alias (already reported)
	hint string   // what to do, from the schema
}

// scalar accessors. Each reports a wrong type at the value and returns
// ok=false; the caller then skips its own checks, so a problem is reported
// once.

func (d *decoder) str(f *field) (string, bool) {
	switch v := f.node.(type) {
	case nil:
		return "", false
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		if v.Value != nil {
			return v.Value.Value, true
		}
		return "", true
	}
	d.errorf(f.node, f.path, "must be a string, got %s; %s", describe(f.node), f.hint)
	return "", false
}

func (d *decoder) integer(f *field) (int64, bool) {
	switch v := f.node.(type) {
	case nil:
		return 0, false
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return x, true
		case uint64:
			if x <= math.MaxInt64 {
				return int64(x), true
			}
		}
		d.errorf(f.node, f.path, "%s is too large; %s", nodeText(v), f.hint)
		return 0, false
	case *ast.StringNode:
		if isDigits(strings.TrimPrefix(v.Value, "-")) && !quoted(v) {
			d.errorf(f.node, f.path, "%s is too large; %s", v.Value, f.hint)
			return 0, false
		}
	case *ast.FloatNode:
		d.errorf(f.node, f.path, "must be a whole number, got %s; %s", nodeText(v), f.hint)
		return 0, false
	}
	d.errorf(f.node, f.path, "must be a whole number, got %s; %s", describe(f.node), f.hint)
	return 0, false
}

func (d *decoder) boolean(f *field) (bool, bool) {
	switch v := f.node.(type) {
	case nil:
		return false, false
	case *ast.BoolNode:
		return v.Value, true
	}
	d.errorf(f.node, f.path, "must be true or false, got %s; %s", describe(f.node), f.hint)
	return false, false
}

// list returns the entries of a list value, unresolved.
func (d *decoder) list(f *field, most int) ([]ast.Node, bool) {
	switch v := f.node.(type) {
	case nil:
		return nil, false
	case *ast.SequenceNode:
		if len(v.Values) > most {
			d.errorf(f.node, f.path, "has %d entries, more than the %d allowed; split the workload", len(v.Values), most)
			return nil, false
		}
		return v.Values, true
	}
	d.errorf(f.node, f.path, "must be a list (entries starting with \"- \"), got %s; %s", describe(f.node), f.hint)
	return nil, false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// quoted reports whether a string was written in quotes. go-yaml hands over
// a plain number too large for 64 bits as a string; only an unquoted one is
// "too large" rather than "not a number".
func quoted(v *ast.StringNode) bool {
	return v.Token != nil && (v.Token.Type == token.SingleQuoteType || v.Token.Type == token.DoubleQuoteType)
}
