package redact

import (
	"encoding/json"
	"fmt"
	"net/url"
	"unicode/utf8"
)

// A secret is matched as itself and as a dozen or more base64 spellings (base64Forms), several
// times the secret's length in all. Kept as text, or as a table a character, they cost
// kilobytes a byte of secret: a 900 KB header value took 1.6 GB. So a form is a recipe, not
// text: the secret (shared, never copied) and how to spell it (which escape, which base64
// alphabet, which alignment); its characters are made as a match walks them (units), and a
// form costs a few words whatever the secret's length (BenchmarkSetMemory).

// escape is a whole-text escape of a secret whose base64 a text may hold (the second layer of
// base64Forms, nested.go).
type escape uint8

const (
	escNone escape = iota
	escPctUpper
	escPctLower
	escQuery
	escPath
	escJSON
	escJSONSlash // PHP's JSON: "/" as `\/`
	numEscapes
)

// escapeTable is what each escape makes of each byte (percent, query, path) or ASCII
// character (JSON); what JSON makes of the rest is in escapeUnit.
var escapeTable = func() (t [numEscapes][256]string) {
	for b := 0; b < 256; b++ {
		t[escNone][b] = string(rune(b))
		t[escPctUpper][b] = fmt.Sprintf("%%%02X", b)
		t[escPctLower][b] = fmt.Sprintf("%%%02x", b)
		t[escQuery][b] = url.QueryEscape(string([]byte{byte(b)}))
		t[escPath][b] = url.PathEscape(string([]byte{byte(b)}))
		if b < utf8.RuneSelf {
			j, _ := json.Marshal(string(rune(b)))
			t[escJSON][b] = string(j[1 : len(j)-1])
			t[escJSONSlash][b] = t[escJSON][b]
		}
	}
	t[escJSONSlash]['/'] = `\/`
	return t
}()

// byteStream gives the bytes of a secret under one escape, one at a time.
type byteStream struct {
	v   string
	i   int // next byte of v to escape
	esc escape
	cur string // the escape of the last unit read, not yet all given
}

func (s *byteStream) next() (byte, bool) {
	for s.cur == "" {
		if s.i >= len(s.v) {
			return 0, false
		}
		s.cur, s.i = escapeUnit(s.v, s.i, s.esc)
	}
	c := s.cur[0]
	s.cur = s.cur[1:]
	return c, true
}

// escapeUnit is the escape of the unit of v at i (a byte for the percent escapes, a character
// for JSON) and where the next unit starts.
func escapeUnit(v string, i int, esc escape) (string, int) {
	switch {
	case esc == escNone:
		return v[i : i+1], i + 1
	case esc != escJSON && esc != escJSONSlash, v[i] < utf8.RuneSelf:
		return escapeTable[esc][v[i]], i + 1
	}
	r, n := utf8.DecodeRuneInString(v[i:])
	switch {
	case r == utf8.RuneError && n == 1:
		return `\ufffd`, i + 1 // as encoding/json writes a byte that is not UTF-8
	case r == '\u2028', r == '\u2029':
		return fmt.Sprintf(`\u%04x`, r), i + n
	}
	return v[i : i+n], i + n
}

const (
	stdAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	urlAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

// b64Stream gives the base64 characters of a byte stream with lead and trail zero bytes
// around it (a secret at an alignment inside a longer base64 text).
type b64Stream struct {
	src         byteStream
	lead, trail int
	alpha       string
	pad         bool
	group       [4]byte
	gi, gn      int
	done        bool
}

func (s *b64Stream) nextByte() (byte, bool) {
	if s.lead > 0 {
		s.lead--
		return 0, true
	}
	if c, ok := s.src.next(); ok {
		return c, true
	}
	if s.trail > 0 {
		s.trail--
		return 0, true
	}
	return 0, false
}

func (s *b64Stream) next() (byte, bool) {
	if s.gi == s.gn {
		if s.done {
			return 0, false
		}
		var in [3]byte
		m := 0
		for ; m < 3; m++ {
			c, ok := s.nextByte()
			if !ok {
				s.done = true
				break
			}
			in[m] = c
		}
		if m == 0 {
			return 0, false
		}
		bits := uint(in[0])<<16 | uint(in[1])<<8 | uint(in[2])
		for j := range s.group {
			s.group[j] = s.alpha[bits>>(18-6*j)&63]
		}
		s.gi, s.gn = 0, 4
		if m < 3 {
			s.gn = m + 1
			if s.pad {
				s.group[2], s.group[3], s.gn = '=', '=', 4
				if m == 2 {
					s.group[2] = s.alpha[bits>>6&63]
				}
			}
		}
	}
	c := s.group[s.gi]
	s.gi++
	return c, true
}

// form is one spelling of a secret: the secret itself, or base64 of it or of one of its
// escapes, whole (padded or not) or only the characters that the secret's bits alone decide
// at one of the three alignments inside a longer base64 text (base64Forms).
type form struct {
	secret string
	n      int    // its units (characters)
	b64    bool   // a base64 spelling, which:
	esc    escape //   of the secret under this escape,
	url    bool   //   in the URL alphabet,
	pad    bool   //   padded (whole),
	lead   int    //   after lead zero bytes (an alignment; -1: whole),
	from   int    //   from this character
	start  *start // what its first characters allow (shared between forms)
}

// units walks a form's characters: a rune, or -1-b for a byte b that is not UTF-8.
type units struct {
	lit  string // the literal form's text left
	b64  b64Stream
	left int // base64 characters still to give
	isB  bool
}

func (f *form) units() units {
	if !f.b64 {
		return units{lit: f.secret}
	}
	alpha := stdAlphabet
	if f.url {
		alpha = urlAlphabet
	}
	u := units{isB: true, left: f.n, b64: b64Stream{src: byteStream{v: f.secret, esc: f.esc}, alpha: alpha, pad: f.pad}}
	if f.lead >= 0 {
		u.b64.lead, u.b64.trail = f.lead, 2
	}
	for range f.from {
		u.b64.next()
	}
	return u
}

func (u *units) next() (rune, bool) {
	if u.isB {
		if u.left == 0 {
			return 0, false
		}
		u.left--
		c, ok := u.b64.next()
		return rune(c), ok
	}
	if u.lit == "" {
		return 0, false
	}
	r, n := utf8.DecodeRuneInString(u.lit)
	if r == utf8.RuneError && n == 1 {
		r = -1 - rune(u.lit[0])
	}
	u.lit = u.lit[n:]
	return r, true
}

// same says whether two forms spell the same units, walking both only as far as they agree
// (a few characters, unless they are the same).
func (f *form) same(g *form) bool {
	if f.n != g.n {
		return false
	}
	u, w := f.units(), g.units()
	for {
		r, ok := u.next()
		q, _ := w.next()
		if !ok || r != q {
			return !ok
		}
	}
}

// escapedLen is the length of v under esc, and whether that differs from v.
func escapedLen(v string, esc escape) (n int, differs bool) {
	s := byteStream{v: v, esc: esc}
	for c, ok := s.next(); ok; c, ok = s.next() {
		if n >= len(v) || v[n] != c {
			differs = true
		}
		n++
	}
	return n, differs || n != len(v)
}

// base64Forms are the base64 and base64url spellings of v and of its escapes: whole (padded
// and not), and the characters that only v's bits decide when v sits at each of the three
// alignments inside a longer base64 text. Forms shorter than MinLen are left out.
func base64Forms(v string) []form {
	var out []form
	for esc := escNone; esc < numEscapes; esc++ {
		l, differs := escapedLen(v, esc)
		if esc != escNone && !differs {
			continue
		}
		for _, isURL := range []bool{false, true} {
			f := form{secret: v, b64: true, esc: esc, url: isURL, lead: -1}
			f.n = (4*l + 2) / 3
			out = append(out, f)
			f.pad, f.n = true, (l+2)/3*4
			out = append(out, f)
			for k := 0; k < 3; k++ {
				from := (8*k + 5) / 6
				to := (8*(k+l) - 6) / 6 // the last character wholly inside v's bits
				if to >= from {
					out = append(out, form{secret: v, b64: true, esc: esc, url: isURL, lead: k, from: from, n: to - from + 1})
				}
			}
		}
	}
	return slicesDeleteShort(out)
}

func slicesDeleteShort(fs []form) []form {
	out := fs[:0]
	for _, f := range fs {
		if f.n >= MinLen {
			out = append(out, f)
		}
	}
	return out
}
