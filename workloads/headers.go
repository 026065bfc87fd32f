package workloads

// A URL target's extra request headers: from the workload (headers:) or the command line
// (--header), values expanded from the environment only when the run starts.

import (
	"fmt"
	"net/textproto"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Header is one extra request header of a URL target. Value is as written: ${VAR} references
// are expanded only when the run starts (ExpandHeaders), because they usually name secrets.
type Header struct {
	Name, Value string
	Where       string // file:line:col of the value
}

// managedHeaders are set by the client itself on every request; a workload may not override
// them.
var managedHeaders = []string{"Host", "Content-Type", "Content-Length", "Accept", "Mcp-Session-Id",
	"Mcp-Protocol-Version", "Last-Event-Id", "Connection", "Transfer-Encoding", "Upgrade"}

func (d *decoder) headers(f *field) []Header {
	return d.nameValues(f, nameValues{
		mappingOf: "header names",
		what:      "header",
		name: func(mv *ast.MappingValueNode, name string, isScalar bool, path string) (string, bool) {
			switch {
			case !isScalar:
				d.errorf(mv, f.path, "a header name must be a plain word, e.g. Authorization")
			case !validHeaderName(name):
				d.errorf(mv.Key, path, "%q is not a valid header name; use letters, digits and - (e.g. X-Api-Key)", name)
			case slices.Contains(managedHeaders, textproto.CanonicalMIMEHeaderKey(name)):
				d.errorf(mv.Key, path, "%s is set by mcpchaos itself on every request; remove it", name)
			default:
				return textproto.CanonicalMIMEHeaderKey(name), true
			}
			return "", false
		},
		valueHint: "write the value as a string, e.g. \"Bearer ${MCP_TOKEN}\"",
		forbidden: "\r\n\x00",
		why:       "a header value cannot contain a line break; write it on one line",
	})
}

// ParseHeader reads a header given on the command line as "Name: value"; the value's ${VAR}
// references are expanded when the run starts, like a workload's.
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok:
		return Header{}, fmt.Errorf("%q: write it as \"Name: value\", e.g. \"Authorization: Bearer ${MCP_TOKEN}\"", redactHeader(s))
	case !validHeaderName(name):
		return Header{}, fmt.Errorf("%q is not a valid header name; use letters, digits and - (e.g. X-Api-Key)", name)
	case slices.Contains(managedHeaders, textproto.CanonicalMIMEHeaderKey(name)):
		return Header{}, fmt.Errorf("%s is set by mcpchaos itself on every request; remove it", name)
	}
	if msg := checkVars(value); msg != "" {
		return Header{}, fmt.Errorf("%s: %s", name, msg)
	}
	return Header{Name: textproto.CanonicalMIMEHeaderKey(name), Value: value, Where: "--header " + name}, nil
}

// redactHeader shows no more of a malformed header flag than its first few characters: it may
// be a secret pasted without its name.
func redactHeader(s string) string {
	if len(s) > 4 {
		return s[:4] + "…"
	}
	return s
}

// ExpandHeaders returns the target's headers with every ${VAR} replaced by the variable's value
// from lookup (os.LookupEnv), as an http.Header's map (this package links no HTTP client). An
// error names the header and the variable, never a value.
func (t Target) ExpandHeaders(lookup func(string) (string, bool)) (map[string][]string, error) {
	h := map[string][]string{}
	total := 0
	for _, hd := range t.Headers {
		v, missing := expandVars(hd.Value, lookup)
		if missing != "" {
			return nil, fmt.Errorf("%s: target.headers.%s: environment variable %s is not set; export it before the run (its value is never printed)",
				hd.Where, hd.Name, missing)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, fmt.Errorf("%s: target.headers.%s: the expanded value contains a line break or NUL, which no header may carry; check the variables it names",
				hd.Where, hd.Name)
		}
		if total += len(v); total > MaxSecretBytes {
			return nil, fmt.Errorf("%s: target.headers.%s: %s (as expanded from the environment)", hd.Where, hd.Name, overBudget("header", total))
		}
		k := textproto.CanonicalMIMEHeaderKey(hd.Name) // as http.Header.Add keys it
		h[k] = append(h[k], v)
	}
	return h, nil
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	for _, r := range s {
		if r > 0x7e || r <= 0x20 || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return s != ""
}
