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
