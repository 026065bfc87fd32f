package redact

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// alt is one encoding of a character: its literal bytes (compared exactly), or an escape
// (compared ignoring ASCII case: %2f and %2F, \u002b and \u002B).
type alt struct {
	s    string
	fold bool
}

// encodings are the spellings of one character of a form that a text may hold: literal,
// percent-encoded, JSON- and Go-quoted, HTML-escaped.
func encodings(r rune) []alt {
	var out []alt
	add := func(s string, fold bool) {
		if !slices.Contains(out, alt{s, fold}) {
			out = append(out, alt{s, fold})
		}
	}
	if r < 0 { // a byte that is not UTF-8
		b := byte(-1 - r)
		add(string([]byte{b}), false)
		add(fmt.Sprintf("%%%02X", b), true)
		add(fmt.Sprintf(`\x%02X`, b), true)
		add(`\uFFFD`, true) // what encoding/json makes of it
		add("\uFFFD", false)
		return out
	}
	lit := string(r)
	add(lit, false)
	var pct, hx strings.Builder
	for i := 0; i < len(lit); i++ {
		fmt.Fprintf(&pct, "%%%02X", lit[i])
		fmt.Fprintf(&hx, `\x%02X`, lit[i])
	}
	add(pct.String(), true)
	add(hx.String(), true)
	if r <= 0xFFFF {
		add(fmt.Sprintf(`\u%04X`, r), true)
	} else if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
		add(fmt.Sprintf(`\u%04X\u%04X`, r1, r2), true)
	}
	add(fmt.Sprintf(`\U%08X`, r), true)
	add(fmt.Sprintf("&#%d;", r), true)
	add(fmt.Sprintf("&#x%X;", r), true)
	add(fmt.Sprintf("&#x%02X;", r), true)
	add(fmt.Sprintf("&#x%04X;", r), true)
	for _, s := range specials[r] {
		add(s, true)
	}
	return out
}

// specials are the short escapes of characters that have one.
var specials = map[rune][]string{
	' ': {"+"}, '/': {`\/`}, '"': {`\"`, "&quot;"}, '\\': {`\\`}, '\'': {`\'`, "&apos;"},
	'&': {"&amp;"}, '<': {"&lt;"}, '>': {"&gt;"}, '\n': {`\n`}, '\r': {`\r`}, '\t': {`\t`},
	'\b': {`\b`}, '\f': {`\f`}, '\v': {`\v`}, '\a': {`\a`},
}

// at compares a with text from i: whole (n > 0 is the length matched), or only as far as the
// text goes (partial: more text could complete it).
func (a alt) at(text []byte, i int) (n int, partial bool) {
	rest := text[i:]
	if len(rest) > 0 && rest[0] != a.s[0] { // no encoding starts with a letter but the literal
		return 0, false
	}
	m := min(len(rest), len(a.s))
	for j := 0; j < m; j++ {
		c, d := rest[j], a.s[j]
		if c != d && !(a.fold && c|0x20 == d|0x20 && c|0x20 >= 'a' && c|0x20 <= 'z') {
			return 0, false
		}
	}
	if m < len(a.s) {
		return 0, true
	}
	return m, false
}

// escapeStart are the bytes an encoding other than the literal starts with.
var escapeStart = [256]bool{'%': true, '\\': true, '&': true, '+': true, 0xEF: true} // 0xEF: U+FFFD, what JSON makes of a byte that is not UTF-8

// matchAt matches form f at text[i:], each character in any of its encodings: the end of the
// longest match (or -1), and whether more text could make a match there.
func (s *Set) matchAt(text []byte, i int, f *form) (end int, partial bool) {
	var buf1, buf2 [8]int
	front, next := append(buf1[:0], i), buf2[:0]
	u := f.units()
	for r, ok := u.next(); ok; r, ok = u.next() {
		alts := s.altsOf(r)
		next = next[:0]
		for _, p := range front {
			if p < len(text) && !escapeStart[text[p]] { // only the literal can match here (alts[0])
				n, part := alts[0].at(text, p)
				partial = partial || part
				if n > 0 && !slices.Contains(next, p+n) && len(next) < cap(next) {
					next = append(next, p+n)
				}
				continue
			}
			for k, a := range alts {
				n, part := a.at(text, p)
				partial = partial || part
				if n > 0 && !slices.Contains(next, p+n) && len(next) < cap(next) {
					next = append(next, p+n)
				}
				if k > 0 { // an escape, its own bytes escaped again (nested.go)
					partial = nestedAt(a, text, p, &next) || partial
				}
			}
		}
		if len(next) == 0 {
			return -1, partial
		}
		front, next = next, front
	}
	return slices.Max(front), partial
}

// redact replaces every match of a form, leftmost first, the longest there. With more (a
// stream that goes on), it also returns how many bytes at the end of out must wait for more
// text: they may start a match. text is not modified; out is text itself when nothing matched.
func (s *Set) redact(text []byte, more bool) (out []byte, held int) {
	if s.Empty() {
		return text, 0
	}
	last := 0 // text[:last] is in out
	for i := 0; i < len(text); i++ {
		ks := s.byFirst[text[i]]
		if len(ks) == 0 {
			continue
		}
		end, partial := -1, false
		for _, k := range ks {
			if i+1 < len(text) && !s.forms[k].start.follows(text[i], text[i+1]) {
				continue
			}
			e, p := s.matchAt(text, i, &s.forms[k])
			end, partial = max(end, e), partial || p
		}
		if end < 0 && partial && more {
			out = append(out, text[last:]...)
			return out, len(text) - i
		}
		if end < 0 {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(text))
		}
		out = append(append(out, text[last:i]...), Mark...)
		last = end
		i = end - 1
	}
	if out == nil {
		return text, 0
	}
	return append(out, text[last:]...), 0
}

// Bytes returns b with every secret, in every encoding, replaced by Mark.
func (s *Set) Bytes(b []byte) []byte {
	out, _ := s.redact(b, false)
	return out
}

// String returns text with every secret, in every encoding, replaced by Mark, and the
// user-info, query and fragment of every absolute URL in it too.
func (s *Set) String(text string) string {
	out, _ := s.redact([]byte(text), false)
	return redactURLsIn(string(out))
}
