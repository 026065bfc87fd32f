package gate

import (
	"fmt"
	"strings"
)

// DidYouMean serves every "unknown name" message of the tool: workload keys and values,
// threshold metrics.
//
// DidYouMean suggests the allowed word closest to s, as `did you mean "x"? `,
// or returns "" when none is close: the same word but for case, _ and -; a
// word that starts with s (or that s starts with); or one within a few
// typos.
func DidYouMean(s string, allowed []string) string {
	norm := func(x string) string { return separators.Replace(strings.ToLower(x)) }
	suggest := func(a string) string { return fmt.Sprintf("did you mean %q? ", a) }
	ns := norm(s)
	for _, a := range allowed {
		if norm(a) == ns {
			return suggest(a)
		}
	}
	if len(ns) >= 3 {
		for _, a := range allowed {
			if na := norm(a); strings.HasPrefix(na, ns) || strings.HasPrefix(ns, na) && len(na) >= 3 {
				return suggest(a)
			}
		}
	}
	best, bestDist := "", 0
	for _, a := range allowed {
		if len(a) < 3 {
			continue // every short word is a typo or two from another
		}
		dist := editDistance([]rune(strings.ToLower(s)), []rune(a))
		if limit := max(1, len(a)/3); dist <= limit && (best == "" || dist < bestDist) {
			best, bestDist = a, dist
		}
	}
	if best == "" {
		return ""
	}
	return suggest(best)
}

var separators = strings.NewReplacer("_", "", "-", "", "/", "", " ", "")

// editDistance is the Levenshtein distance, for short words only.
func editDistance(a, b []rune) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
