// Package words writes counts in English for the tool's messages: "1 regression", "3
// regressions". One place, so every message counts the same way. It knows no domain.
package words

import "strconv"

// S is the plural suffix for n of a regular noun: "" for one, "s" otherwise (zero included:
// "0 probes").
func S(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Count is n and the regular noun, plural unless n is one: Count(2, "probe") is "2 probes".
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + noun + S(n)
}
