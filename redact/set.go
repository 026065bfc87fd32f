package redact

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// Mark replaces a secret.
const Mark = "[redacted]"

// MinLen is the shortest value treated as a secret: shorter ones would match by accident.
const MinLen = 8

// Set is a run's secrets, each matched in every encoding. Build it (Add, AddHeader, AddURL)
// before it is used; from then on it is read-only and safe for concurrent use. A nil Set has
// no secrets, but still redacts the user-info and query of URLs in texts (String).
type Set struct {
	secrets []string
	known   map[string]bool
	forms   []form             // each secret's literal and base64 forms, longest first
	byFirst [256][]int32       // the forms (indexes) that can start with a byte, in some encoding
	alts    map[rune][]alt     // the encodings of characters beyond ASCII, up to maxAltsCached
	starts  map[[2]rune]*start // what forms' first two characters allow, shared
}

// maxAltsCached bounds the encodings kept for characters beyond ASCII: a secret of a million
// different characters must not cost a table each; past the bound they are made as matched.
const maxAltsCached = 4096

// New returns a Set of the given secrets.
func New(secrets ...string) *Set {
	s := &Set{}
	s.Add(secrets...)
	return s
}

// Secrets lists the secrets, as given.
func (s *Set) Secrets() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.secrets)
}

// Empty says whether the set has no secret.
func (s *Set) Empty() bool { return s == nil || len(s.secrets) == 0 }

// Add adds secrets; values shorter than MinLen are left out.
func (s *Set) Add(secrets ...string) {
	for _, v := range secrets {
		s.add(v)
	}
	s.index()
}

func (s *Set) add(v string) {
	if len(v) < MinLen || s.known[v] {
		return
	}
	if s.known == nil {
		s.known, s.alts, s.starts = map[string]bool{}, map[rune][]alt{}, map[[2]rune]*start{}
	}
	s.known[v] = true
	s.secrets = append(s.secrets, v)
	lit := form{secret: v, n: utf8.RuneCountInString(v)}
	kept := []form{lit} // a base64 form that is v itself, or another, is left out
	for _, f := range base64Forms(v) {
		if !slices.ContainsFunc(kept, func(g form) bool { return f.same(&g) }) {
			kept = append(kept, f)
		}
	}
	for _, f := range kept {
		s.addForm(f)
	}
}

// AddHeader adds the values of extra request headers: each whole value, each of its words
// ("Bearer TOKEN": the token too) and, for a word that is base64 of text (Basic credentials),
// the text and its parts around ':' (the password). h is an http.Header, or its map as
// workloads.Target.ExpandHeaders returns it (workloads links no HTTP client).
func (s *Set) AddHeader(h map[string][]string) {
	defer s.index()
	for _, vs := range h {
		for _, v := range vs {
			s.add(v)
			for _, w := range strings.Fields(v) {
				s.add(w)
				if d, ok := decodedText(w); ok {
					s.add(d)
					for _, part := range strings.Split(d, ":") {
						s.add(part)
					}
				}
			}
		}
	}
}

// AddURL adds what a URL may carry as credentials: its user-info (the user, the password, the
// pair) and its query (the whole query, each value raw and decoded).
func (s *Set) AddURL(u *url.URL) {
	if u == nil {
		return
	}
	defer s.index()
	if u.User != nil {
		s.add(u.User.String())
		s.add(u.User.Username())
		if p, ok := u.User.Password(); ok {
			s.add(p)
			s.add(u.User.Username() + ":" + p)
		}
	}
	if u.RawQuery != "" {
		s.add(u.RawQuery)
		for _, kv := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
			_, v, _ := strings.Cut(kv, "=")
			s.add(v)
			if d, err := url.QueryUnescape(v); err == nil {
				s.add(d)
			}
		}
	}
}

func (s *Set) addForm(f form) {
	u := f.units()
	r0, _ := u.next()
	r1, more := u.next()
	if !more {
		r1 = noUnit
	}
	for _, r := range []rune{r0, r1} {
		if _, ok := s.alts[r]; !ok && r >= utf8.RuneSelf && len(s.alts) < maxAltsCached {
			s.alts[r] = encodings(r)
		}
	}
	st := s.starts[[2]rune{r0, r1}]
	if st == nil {
		st = &start{}
		for _, a := range s.altsOf(r0) {
			st.first[a.s[0]/64] |= 1 << (a.s[0] % 64) // no encoding starts with a letter but the literal: no case to fold
		}
		st.seconds(s.altsOf(r0), r1, s.altsOf)
		s.starts[[2]rune{r0, r1}] = st
	}
	f.start = st
	s.forms = append(s.forms, f)
}

// index lists, for each byte, the forms that can start with it, longest first.
func (s *Set) index() {
	slices.SortStableFunc(s.forms, func(a, b form) int { return b.n - a.n })
	for c := range s.byFirst {
		s.byFirst[c] = s.byFirst[c][:0]
	}
	for k := range s.forms {
		for c := range 256 {
			if s.forms[k].start.first[c/64]&(1<<(c%64)) != 0 {
				s.byFirst[c] = append(s.byFirst[c], int32(k))
			}
		}
	}
}

// altsOf are the encodings of a unit: from tables for ASCII and bytes that are not UTF-8,
// from the set's cache, or made now (past maxAltsCached).
func (s *Set) altsOf(r rune) []alt {
	switch {
	case r >= 0 && r < utf8.RuneSelf:
		return byteAlts[r]
	case r < 0 && r >= -256:
		return invalidAlts[-1-r]
	}
	if a, ok := s.alts[r]; ok {
		return a
	}
	return encodings(r)
}

// decodedText is w decoded from base64 (any of the four), if that gives printable text.
func decodedText(w string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(w); err == nil && utf8.Valid(b) && !slices.ContainsFunc(b, func(c byte) bool { return c < 0x20 }) {
			return string(b), true
		}
	}
	return "", false
}
