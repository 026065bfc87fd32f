package redact

// Text may have been encoded twice before it reaches an output: a percent-encoded path quoted
// in a JSON error ("%2F" as "\u00252F"), a URL encoded again ("%252F"), PHP's "\/" inside a
// JSON string ("\\/"), a base64 of a percent-encoded or JSON-escaped token. A Set matches two
// layers in one pass, and no more (the cost of a layer multiplies):
//
//   - each escape of a character (an alt other than the literal) may have its own bytes in
//     any single-layer encoding of a byte (byteAlts), as a second text encoding makes them;
//   - the base64 forms of a secret are also made of the secret percent-encoded (either hex
//     case, as a query or a path escapes it) and JSON-escaped (with "\/" or not): base64 of
//     an escaped text.

// byteAlts are the single-layer encodings of each ASCII byte, for the second layer.
var byteAlts = func() (t [128][]alt) {
	for b := range t {
		t[b] = encodings(rune(b))
	}
	return t
}()

// nestedAt matches a's bytes at text[p:], each byte in any of its single-layer encodings;
// it adds the ends to ends (bounded by its capacity) and says whether more text could make a
// match (partial).
func nestedAt(a alt, text []byte, p int, ends *[]int) (partial bool) {
	var buf1, buf2 [8]int
	front, next := append(buf1[:0], p), buf2[:0]
	for j := 0; j < len(a.s); j++ {
		c := a.s[j]
		if c >= 128 {
			return false
		}
		next = next[:0]
		alts := byteAlts[c]
		if l := c | 0x20; a.fold && j > 0 && l >= 'a' && l <= 'z' { // a hex digit or an escape letter: either case
			alts = append(alts[:len(alts):len(alts)], alt{string(c ^ 0x20), false})
		}
		for _, q := range front {
			for _, b := range alts {
				n, part := b.at(text, q)
				partial = partial || part
				if n > 0 && len(next) < cap(next) {
					next = append(next, q+n)
				}
			}
		}
		if len(next) == 0 {
			return partial
		}
		front, next = next, front
	}
	for _, e := range front {
		if len(*ends) < cap(*ends) {
			*ends = append(*ends, e)
		}
	}
	return partial
}

// escapes are the bytes an escape starts with; escapeIndex numbers them (-1: none).
var escapes = [...]byte{'%', '\\', '&', '+'}

func escapeIndex(c byte) int {
	for i, e := range escapes {
		if e == c {
			return i
		}
	}
	return -1
}

// start is what a form's first characters allow, for a quick look before a match: the bytes
// it may start with, and the byte that may follow each (second, lit). Forms with the same
// first two characters share one.
type start struct {
	first [4]uint64
	// second says, for a form's start at an escape byte ('%', '\\', '&', '+'), which bytes may
	// follow it (one or two layers): most escape bytes in a text (a JSON \" or \n) start no
	// form, and are passed over at the cost of a lookup.
	second [len(escapes)][4]uint64
	lit    [4]uint64 // the same after the literal first character's first byte
}

// noUnit stands for the second character of a form of one.
const noUnit = rune(-1 << 30)

// invalidAlts are the encodings of each byte that is not UTF-8 (a unit -1-b).
var invalidAlts = func() (t [256][]alt) {
	for b := range t {
		t[b] = encodings(rune(-1 - b))
	}
	return t
}()

// seconds fills f.second from the encodings of its first unit: for each encoding starting
// with an escape byte, its second byte (either case where it folds), and for each nested
// spelling, the second byte of each byte encoding of the escape's first byte. An encoding of
// one byte (an escape byte itself, or a '+' for a space) may be followed by anything.
func (f *start) seconds(alts []alt, unit1 rune, altsOf func(rune) []alt) {
	mark := func(first byte, next string, fold bool) {
		e := escapeIndex(first)
		if e < 0 {
			return
		}
		if next == "" { // one byte: any follows
			f.second[e] = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
			return
		}
		c := next[0]
		f.second[e][c/64] |= 1 << (c % 64)
		if l := c | 0x20; fold && l >= 'a' && l <= 'z' {
			c ^= 0x20
			f.second[e][c/64] |= 1 << (c % 64)
		}
	}
	for k, a := range alts {
		mark(a.s[0], a.s[1:], a.fold)
		if k == 0 || a.s[0] >= 128 {
			continue
		}
		for _, b := range byteAlts[a.s[0]] { // the escape's first byte, escaped again
			if len(b.s) > 1 {
				mark(b.s[0], b.s[1:], true)
			} else if len(a.s) > 1 && a.s[1] < 128 { // the first byte literal: the next is a's second, in any encoding
				for _, c := range byteAlts[a.s[1]] {
					mark(b.s[0], c.s[:1], a.fold)
				}
				mark(b.s[0], string(a.s[1]^0x20), false)
			} else {
				mark(b.s[0], "", false)
			}
		}
	}
	// After a first byte that is no escape (the literal character, or the bytes JSON makes
	// of one that is not UTF-8): the encoding's own second byte, or (one byte) the first byte
	// of any encoding of the second character.
	lit := func(c byte) { f.lit[c/64] |= 1 << (c % 64) }
	for _, a := range alts {
		switch {
		case escapeIndex(a.s[0]) >= 0:
		case len(a.s) > 1:
			lit(a.s[1])
		case unit1 != noUnit:
			for _, b := range altsOf(unit1) {
				lit(b.s[0])
			}
		default:
			f.lit = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
		}
	}
}

// follows says whether the form may start with c then d: after an escape byte, as seconds
// found; after any other, as the literal first character allows.
func (f *start) follows(c, d byte) bool {
	if e := escapeIndex(c); e >= 0 {
		return f.second[e][d/64]&(1<<(d%64)) != 0
	}
	return f.lit[d/64]&(1<<(d%64)) != 0
}
