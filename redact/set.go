package redact

import (
	"encoding/base64"
	"net/http"
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
	forms   []form         // each secret's literal and base64 forms, longest first
	byFirst [256][]int     // the forms (indexes) that can start with a byte, in some encoding
	alts    map[rune][]alt // the encodings of each character of the forms
}

// form is one spelling of a secret (the secret itself, or one of its base64 forms), a unit a
// character; each unit is matched in any of its encodings (alts).
type form struct {
	units []rune  // a rune, or -1-b for a byte b that is not UTF-8
	alts  [][]alt // the encodings of each unit (Set.alts, looked up once)
	first [256]bool
	// second says, for a form's start at an escape byte ('%', '\\', '&', '+'), which bytes may
	// follow it (one or two layers): most escape bytes in a text (a JSON \" or \n) start no
	// form, and are passed over at the cost of a lookup (nested.go).
	second [len(escapes)][4]uint64
	lit    [4]uint64 // the same after the literal first character's first byte
}

// New returns a Set of the given secrets.
func New(secrets ...string) *Set {
	s := &Set{alts: map[rune][]alt{}}
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
		if len(v) < MinLen || slices.Contains(s.secrets, v) {
			continue
		}
		s.secrets = append(s.secrets, v)
		s.addForm(v)
		var b64 []string
		for _, e := range append([]string{v}, escapedForms(v)...) {
			for _, b := range base64Forms(e) {
				if !slices.Contains(b64, b) {
					b64 = append(b64, b)
				}
			}
		}
		for _, b := range b64 {
			s.addForm(b)
		}
	}
	s.index()
}

// AddHeader adds the values of extra request headers: each whole value, each of its words
// ("Bearer TOKEN": the token too) and, for a word that is base64 of text (Basic credentials),
// the text and its parts around ':' (the password).
func (s *Set) AddHeader(h http.Header) {
	for _, vs := range h {
		for _, v := range vs {
			s.Add(v)
			for _, w := range strings.Fields(v) {
				s.Add(w)
				if d, ok := decodedText(w); ok {
					s.Add(d)
					s.Add(strings.Split(d, ":")...)
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
	if u.User != nil {
		s.Add(u.User.String(), u.User.Username())
		if p, ok := u.User.Password(); ok {
			s.Add(p, u.User.Username()+":"+p)
		}
	}
	if u.RawQuery != "" {
		s.Add(u.RawQuery)
		for _, kv := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
			_, v, _ := strings.Cut(kv, "=")
			s.Add(v)
			if d, err := url.QueryUnescape(v); err == nil {
				s.Add(d)
			}
		}
	}
}

func (s *Set) addForm(v string) {
	f := form{}
	for i := 0; i < len(v); {
		r, n := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && n == 1 {
			r = -1 - rune(v[i])
		}
		f.units = append(f.units, r)
		i += n
	}
	for _, r := range f.units {
		if _, ok := s.alts[r]; !ok {
			s.alts[r] = encodings(r)
		}
		f.alts = append(f.alts, s.alts[r])
	}
	for _, a := range s.alts[f.units[0]] {
		f.first[a.s[0]] = true // no encoding starts with a letter but the literal: no case to fold
	}
	f.seconds(s.alts[f.units[0]], s.alts)
	s.forms = append(s.forms, f)
}

// index lists, for each byte, the forms that can start with it, longest first.
func (s *Set) index() {
	slices.SortStableFunc(s.forms, func(a, b form) int { return len(b.units) - len(a.units) })
	for c := range s.byFirst {
		s.byFirst[c] = s.byFirst[c][:0]
		for k := range s.forms {
			if s.forms[k].first[c] {
				s.byFirst[c] = append(s.byFirst[c], k)
			}
		}
	}
}

// base64Forms are the base64 and base64url spellings of v: whole (padded and not), and the
// characters that only v's bits decide when v sits at each of the three alignments inside a
// longer base64 text.
func base64Forms(v string) []string {
	var out []string
	add := func(f string) {
		if len(f) >= MinLen && f != v && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		add(enc.EncodeToString([]byte(v)))
		add(enc.WithPadding(base64.NoPadding).EncodeToString([]byte(v)))
		for k := 0; k < 3; k++ {
			buf := make([]byte, k+len(v)+2)
			copy(buf[k:], v)
			e := enc.WithPadding(base64.NoPadding).EncodeToString(buf)
			from := (8*k + 5) / 6
			to := (8*(k+len(v)) - 6) / 6 // the last character wholly inside v's bits
			if to >= from {
				add(e[from : to+1])
			}
		}
	}
	return out
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
