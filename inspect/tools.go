package inspect

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// toolInfo is a tool as tools/list describes it.
type toolInfo struct {
	Name        string             `json:"name"`
	Description string             `json:"description"`
	InputSchema *jsonschema.Schema `json:"inputSchema"`
	Annotations struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
	} `json:"annotations"`
}

// maxTools bounds how many tools inspect calls while looking for a cursor.
const maxTools = 3

// Words that make a tool likely to stream notifications (progress, logs) before its result, and
// words that make a tool too dangerous to call unasked on someone's server.
var (
	streamingWords   = []string{"progress", "slow", "long", "stream", "notif", "log", "sleep", "wait", "delay", "tick"}
	destructiveWords = []string{"delete", "remove", "drop", "destroy", "kill", "purge", "truncate", "wipe", "reset", "shutdown"}
)

// pickTools chooses up to maxTools tools to call with a progress token, the likeliest to stream
// first, then those marked read-only, those marked destructive last (SDKs such as mcp-go mark
// every tool destructive by default, so the mark alone cannot rule a tool out); never a tool
// named like a destructive one. A tool the user named is the only one called.
func pickTools(list json.RawMessage, named string) []toolInfo {
	var l struct {
		Tools []toolInfo `json:"tools"`
	}
	if json.Unmarshal(list, &l) != nil {
		return nil
	}
	if named != "" {
		for _, t := range l.Tools {
			if t.Name == named {
				return []toolInfo{t}
			}
		}
		return nil
	}
	var out []toolInfo
	for _, t := range l.Tools {
		if hasWord(t.Name, destructiveWords) {
			continue
		}
		out = append(out, t)
	}
	score := func(t toolInfo) int {
		s := 0
		if hasWord(t.Name+" "+t.Description, streamingWords) {
			s -= 2
		}
		if isTrue(t.Annotations.ReadOnly) {
			s--
		}
		if isTrue(t.Annotations.Destructive) {
			s++
		}
		return s
	}
	slices.SortStableFunc(out, func(a, b toolInfo) int { return cmp.Compare(score(a), score(b)) })
	return out[:min(len(out), maxTools)]
}

func hasWord(s string, words []string) bool {
	s = strings.ToLower(s)
	return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(s, w) })
}

// minimalArgs builds the smallest instance its input schema accepts: required properties
// only, each at its default, const, first enum value or least valid value. It is a best
// effort: a schema it cannot satisfy gets its closest try, and the server's refusal says so.
func minimalArgs(s *jsonschema.Schema) map[string]any {
	v, _ := minimal(s, 0).(map[string]any)
	if v == nil {
		v = map[string]any{}
	}
	return v
}

func minimal(s *jsonschema.Schema, depth int) any {
	if s == nil || depth > 8 {
		return nil
	}
	if s.Default != nil {
		var d any
		if json.Unmarshal(s.Default, &d) == nil {
			return d
		}
	}
	switch {
	case s.Const != nil:
		return *s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	case len(s.AnyOf) > 0:
		return minimal(s.AnyOf[0], depth+1)
	case len(s.OneOf) > 0:
		return minimal(s.OneOf[0], depth+1)
	}
	typ := s.Type
	if typ == "" && len(s.Types) > 0 {
		typ = s.Types[0]
	}
	if typ == "" && s.Properties != nil {
		typ = "object"
	}
	switch typ {
	case "object":
		obj := map[string]any{}
		for _, name := range s.Required {
			obj[name] = minimal(s.Properties[name], depth+1)
		}
		return obj
	case "array":
		n := 0
		if s.MinItems != nil {
			n = *s.MinItems
		}
		arr := make([]any, min(n, 16))
		for i := range arr {
			arr[i] = minimal(s.Items, depth+1)
		}
		return arr
	case "string":
		n := 1
		if s.MinLength != nil {
			n = max(*s.MinLength, 1)
		}
		return strings.Repeat("x", min(n, 64))
	case "integer", "number":
		switch {
		case s.Minimum != nil:
			return *s.Minimum
		case s.ExclusiveMinimum != nil:
			return *s.ExclusiveMinimum + 1
		case s.Maximum != nil && *s.Maximum < 0:
			return *s.Maximum
		}
		return 0
	case "boolean":
		return false
	case "null":
		return nil
	}
	return "x"
}
