package workloads

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// nameValues says how to read one mapping of names to string values (a target's headers, an
// exec action's environment); the walk, the limits, duplicates and ${VAR} checks are shared.
type nameValues struct {
	mappingOf string // what the keys are, for the error on a non-mapping
	what      string // what one key is, for the duplicate error
	// name checks a key and returns the name it is stored and compared under; on false it
	// has reported why.
	name      func(mv *ast.MappingValueNode, name string, isScalar bool, path string) (string, bool)
	valueHint string // how to write a value
	forbidden string // characters a value cannot contain
	why       string // the error when it does
}

// MaxSecretBytes bounds the values of one mapping of names to values (a target's headers, an
// exec action's environment), as written and again as expanded from the environment: 64 KiB,
// more than most HTTP servers accept in a whole request header block. A run treats these
// values as secrets and cuts them out of everything it writes (package redact); the bound
// keeps what that costs, and what a server is sent, to a known size.
const MaxSecretBytes = 64 << 10

// overBudget is the error for values that come to more than MaxSecretBytes.
func overBudget(what string, total int) string {
	return fmt.Sprintf("the %s values come to %d bytes or more, past the limit of %d (64 KiB); shorten or remove this one", what, total, MaxSecretBytes)
}

// nameValues reads f as nv says: each value a string (numbers and booleans as written), its
// ${VAR} references checked (expanded when the run starts).
func (d *decoder) nameValues(f *field, nv nameValues) []Header {
	if f == nil {
		return nil
	}
	mn, isMap := f.node.(*ast.MappingNode)
	if !isMap {
		d.errorf(f.node, f.path, "must be a mapping of %s to values, got %s; %s", nv.mappingOf, describe(f.node), f.hint)
		return nil
	}
	var out []Header
	seen := map[string]ast.Node{}
	total := 0
	for i, mv := range mn.Values {
		if i >= maxMappingLen {
			d.errorf(mv, f.path, "has more than %d keys; remove the extra keys", maxMappingLen)
			break
		}
		if isNil(mv) || isNil(mv.Key) {
			continue
		}
		k, ok := d.resolve(mv.Key)
		if !ok {
			continue
		}
		name, isScalar := keyName(k)
		path := f.path + "." + name
		if isScalar && mv.Key.IsMergeKey() {
			isScalar = false
		}
		key, ok := nv.name(mv, name, isScalar, path)
		if !ok {
			continue
		}
		if prev, dup := seen[key]; dup {
			line, col := position(prev)
			d.errorf(mv.Key, path, "duplicate %s %q (first at %d:%d); remove one of them", nv.what, name, line, col)
			continue
		}
		seen[key] = mv.Key
		vf := &field{path: path, key: mv.Key, hint: nv.valueHint}
		if vf.node, ok = d.resolve(mv.Value); !ok {
			continue
		}
		var value string
		switch x := vf.node.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
			value = nodeText(x)
		default:
			if value, ok = d.str(vf); !ok {
				continue
			}
		}
		if msg := checkVars(value); msg != "" {
			d.errorf(vf.node, path, "%s", msg)
			continue
		}
		if strings.ContainsAny(value, nv.forbidden) {
			d.errorf(vf.node, path, "%s", nv.why)
			continue
		}
		if total += len(value); total > MaxSecretBytes {
			d.errorf(vf.node, path, "%s", overBudget(nv.what, total))
			break
		}
		line, col := position(vf.node)
		out = append(out, Header{Name: key, Value: value, Where: fmt.Sprintf("%s:%d:%d", d.file, line, col)})
	}
	return out
}

// expandVars replaces ${NAME} with its value; "$$" is a literal "$". It returns the first name
// lookup does not know. The syntax was checked by checkVars.
func expandVars(s string, lookup func(string) (string, bool)) (string, string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '$':
			b.WriteByte('$')
			i++
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String(), ""
			}
			name := s[i+2 : i+end]
			v, ok := lookup(name)
			if !ok {
				return "", name
			}
			b.WriteString(v)
			i += end
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), ""
}

// checkVars checks the ${VAR} references of a header value; it returns "" or the problem.
func checkVars(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			continue
		}
		switch s[i+1] {
		case '$':
			i++
		case '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return fmt.Sprintf("${ at column %d is not closed; write ${NAME}", i+1)
			}
			name := s[i+2 : i+end]
			if !validVarName(name) {
				return fmt.Sprintf("${%s}: a variable name is letters, digits and _, not starting with a digit", name)
			}
			i += end
		}
	}
	return ""
}

func validVarName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}
