package fleet

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// A tool call's arguments come from the workload (a group's `arguments`, with placeholders) or,
// when it gives none, from the tool's inputSchema as the server lists it: the smallest instance
// the schema accepts. Either way nothing is assumed about a tool's arguments (such as a "text"
// argument): a real server refuses arguments its tool does not declare.

// Placeholders that a string in a group's arguments may contain. A string that is exactly one
// of {{client}} or {{seq}} becomes that number, so integer properties can take it.
const (
	PlaceholderClient = "{{client}}" // the client's index in its group, from 0
	PlaceholderSeq    = "{{seq}}"    // the client's tool-call sequence number, from 1
	PlaceholderGroup  = "{{group}}"  // the group's name
)

// expandArgs returns a copy of v with the placeholders replaced.
func expandArgs(v any, group string, client int, seq int64) any {
	switch v := v.(type) {
	case string:
		switch v {
		case PlaceholderClient:
			return client
		case PlaceholderSeq:
			return seq
		}
		if !strings.Contains(v, "{{") {
			return v
		}
		return strings.NewReplacer(PlaceholderClient, strconv.Itoa(client), PlaceholderSeq,
			strconv.FormatInt(seq, 10), PlaceholderGroup, group).Replace(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = expandArgs(e, group, client, seq)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = expandArgs(e, group, client, seq)
		}
		return out
	}
	return v
}

// maxSchemaDepth bounds the walk of a server's schema (a hostile one may nest without end).
const maxSchemaDepth = 16

// MinimalArgs returns the smallest instance that schema (a tool's inputSchema) accepts: every
// required property filled with its default, const or first enum value, or the least value its
// type and bounds allow. It checks the instance against the schema and says why when it does
// not validate (a pattern it cannot satisfy, say): then the workload must give `arguments`.
func MinimalArgs(schema json.RawMessage) (map[string]any, error) {
	var s jsonschema.Schema
	if len(schema) == 0 || string(schema) == "null" {
		return map[string]any{}, nil
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("inputSchema is not a JSON Schema: %w", err)
	}
	obj := MinimalInstance(&s)
	rs, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false})
	if err != nil {
		return obj, nil // a schema this library cannot resolve ($ref elsewhere): send what we built
	}
	if err := rs.Validate(obj); err != nil {
		return obj, fmt.Errorf("the smallest arguments built from its inputSchema do not validate (%v); give the group `arguments`", err)
	}
	return obj, nil
}

// MinimalInstance is the best effort behind MinimalArgs, for a schema already decoded: the
// smallest object it builds, unchecked (a schema it cannot satisfy gets its closest try).
func MinimalInstance(s *jsonschema.Schema) map[string]any {
	obj, ok := minimal(s, 0).(map[string]any)
	if !ok {
		obj = map[string]any{}
	}
	return obj
}

func minimal(s *jsonschema.Schema, depth int) any {
	if s == nil || depth > maxSchemaDepth {
		return nil
	}
	switch {
	case len(s.Default) > 0:
		var v any
		if json.Unmarshal(s.Default, &v) == nil {
			return v
		}
	case s.Const != nil:
		return *s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	case len(s.AnyOf) > 0:
		return minimal(s.AnyOf[0], depth+1)
	case len(s.OneOf) > 0:
		return minimal(s.OneOf[0], depth+1)
	case len(s.AllOf) > 0:
		return minimal(mergeAll(s.AllOf), depth+1)
	}
	switch schemaType(s) {
	case "object":
		obj := map[string]any{}
		for _, name := range s.Required {
			obj[name] = minimal(s.Properties[name], depth+1)
		}
		return obj
	case "array":
		n := 0
		if s.MinItems != nil {
			n = min(*s.MinItems, 64)
		}
		arr := make([]any, n)
		for i := range arr {
			arr[i] = minimal(s.Items, depth+1)
		}
		return arr
	case "string":
		return minimalString(s)
	case "integer":
		return int64(minimalNumber(s, true))
	case "number":
		return minimalNumber(s, false)
	case "boolean":
		return false
	case "null":
		return nil
	}
	return nil
}

// schemaType is the schema's type, the first non-null one of a list, or what its keywords say.
func schemaType(s *jsonschema.Schema) string {
	if s.Type != "" {
		return s.Type
	}
	for _, t := range s.Types {
		if t != "null" {
			return t
		}
	}
	switch {
	case s.Properties != nil || s.Required != nil:
		return "object"
	case s.Items != nil:
		return "array"
	}
	return ""
}

func mergeAll(all []*jsonschema.Schema) *jsonschema.Schema {
	m := &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{}}
	for _, s := range all {
		if s == nil {
			continue
		}
		if m.Type == "" {
			m.Type = schemaType(s)
		}
		maps.Copy(m.Properties, s.Properties)
		m.Required = append(m.Required, s.Required...)
	}
	slices.Sort(m.Required)
	m.Required = slices.Compact(m.Required)
	return m
}

func minimalString(s *jsonschema.Schema) string {
	switch s.Format {
	case "date-time":
		return "2026-01-01T00:00:00Z"
	case "date":
		return "2026-01-01"
	case "email":
		return "mcpchaos@example.com"
	case "uri", "url":
		return "https://example.com/"
	case "uuid":
		return "00000000-0000-4000-8000-000000000000"
	}
	v := "mcpchaos"
	if s.MinLength != nil && *s.MinLength > len(v) {
		v += strings.Repeat("x", min(*s.MinLength, 4096)-len(v))
	}
	if s.MaxLength != nil && *s.MaxLength < len(v) {
		v = v[:max(*s.MaxLength, 0)]
	}
	return v
}

func minimalNumber(s *jsonschema.Schema, integer bool) float64 {
	v := 0.0
	switch {
	case s.Minimum != nil:
		v = *s.Minimum
	case s.ExclusiveMinimum != nil:
		v = *s.ExclusiveMinimum + 1
	case s.Maximum != nil && *s.Maximum < 0:
		v = *s.Maximum
	case s.ExclusiveMaximum != nil && *s.ExclusiveMaximum <= 0:
		v = *s.ExclusiveMaximum - 1
	}
	if integer {
		v = math.Ceil(v)
	}
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		v = math.Ceil(v / *s.MultipleOf) * *s.MultipleOf
	}
	return v
}

// SampleArgs is a group's arguments as its first client's first call sends them (client 0,
// seq 1): what a check against the tool's inputSchema before the run must judge.
func SampleArgs(args map[string]any, group string) any { return expandArgs(args, group, 0, 1) }
