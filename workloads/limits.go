package workloads

import (
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"strings"
)

// Limits checked on the raw bytes before the YAML parser sees them. The parser's cost grows
// faster than the file: 32,000 nested "[" (64 KB) took it 2.2 GB and 39 s (measured with
// /usr/bin/time -v on mcpchaos validate; the issue saw 4 GB). A workload nests about six
// levels deep and uses a handful of aliases.
const (
	maxDepth   = 64  // nesting of collections, block and flow together
	maxAliases = 200 // *alias uses in one file

	// MaxCAFileSize bounds a ca_file read (1 MiB); a CA bundle of every public root is
	// about 200 KB.
	MaxCAFileSize = 1 << 20
)

// checkCAFile reads the PEM file at path, at most MaxCAFileSize bytes of it whatever it is
// (ca_file: /dev/zero must not be read forever), and returns "" or what is wrong with it and
// what to do, as run would find it. Only a regular file is read: a device or a FIFO is refused.
func checkCAFile(path, shown string) string {
	// Stat first: opening a FIFO would wait for a writer.
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Sprintf("cannot read %s: %v; give the path of a PEM file, relative to the workload file", shown, unwrapPath(err))
	case st.IsDir():
		return shown + " is a directory; give the path of a PEM file"
	case !st.Mode().IsRegular():
		return shown + " is not a regular file (a device, a pipe?); give the path of a PEM file"
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("cannot read %s: %v; give the path of a PEM file", shown, unwrapPath(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxCAFileSize+1))
	switch {
	case err != nil:
		return fmt.Sprintf("cannot read %s: %v; give the path of a PEM file", shown, unwrapPath(err))
	case len(data) > MaxCAFileSize:
		return fmt.Sprintf("%s is larger than %d bytes, more than any CA bundle; give the path of a PEM file", shown, MaxCAFileSize)
	case !x509.NewCertPool().AppendCertsFromPEM(data):
		return shown + " holds no PEM certificate; give a file with one or more \"-----BEGIN CERTIFICATE-----\" blocks"
	}
	return ""
}

// scanShape reports the first place where data nests deeper than maxDepth or uses more than
// maxAliases aliases, with what to do; msg is "" when data is within both. It is a lexical
// scan, not a parser: it skips quoted scalars and comments and counts open flow brackets,
// block indentation levels and compact "- " or "? " entries, which is enough to bound the
// parser's work; a valid workload is never near either limit.
func scanShape(data []byte) (line, col int, msg string) {
	s := shapeScanner{line: 1, col: 1, lineStart: true}
	for i := 0; i < len(data); i++ {
		if m := s.step(data, i); m != "" {
			return s.line, s.col, m
		}
		if data[i] == '\n' {
			s.line, s.col, s.lineStart = s.line+1, 1, true
			s.comment, s.plain = false, false
		} else if data[i]&0xC0 != 0x80 { // count runes, not continuation bytes
			s.col++
		}
	}
	return 0, 0, ""
}

type shapeScanner struct {
	line, col int
	lineStart bool
	comment   bool
	plain     bool // inside a plain scalar in block context
	quote     byte // '\'' or '"' while inside a quoted scalar
	escaped   bool // the previous byte escaped this one: \ in "...", ' in '...'

	flow    int   // open [ and {
	indents []int // indentation of the open block levels
	compact int   // "- " and "? " entries opened on this line before its content
	aliases int
}

func (s *shapeScanner) step(data []byte, i int) string {
	c := data[i]
	switch {
	case s.comment:
		return ""
	case s.quote == '"':
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.quote = 0
		}
		return ""
	case s.quote == '\'':
		switch {
		case s.escaped: // the second ' of a doubled ''
			s.escaped = false
		case c == '\'' && i+1 < len(data) && data[i+1] == '\'':
			s.escaped = true
		case c == '\'':
			s.quote = 0
		}
		return ""
	}
	if s.lineStart {
		if c == ' ' || c == '\n' || c == '\r' {
			return ""
		}
		s.lineStart = false
		if c != '#' && s.flow == 0 {
			s.block(s.col - 1)
		}
	}
	tokenStart := i == 0 || isSpaceOrFlow(data[i-1])
	if s.plain { // brackets in plain text are text; ": " or " #" ends it
		switch {
		case c == ':' && (i+1 == len(data) || isSpace(data[i+1])):
			s.plain = false
		case c == '#' && isSpace(data[i-1]):
			s.plain, s.comment = false, true
		}
		return ""
	}
	if tokenStart && s.flow == 0 && !isSpace(c) && !strings.ContainsRune(indicators, rune(c)) {
		s.plain = true
		return ""
	}
	switch {
	case c == '#' && (i == 0 || data[i-1] == ' ' || data[i-1] == '\t'):
		s.comment = true
	case (c == '\'' || c == '"') && tokenStart:
		s.quote = c
	case c == '[' || c == '{':
		s.flow++
	case (c == ']' || c == '}') && s.flow > 0:
		s.flow--
	case (c == '-' || c == '?') && s.flow == 0 && tokenStart && (i+1 == len(data) || isSpace(data[i+1])):
		s.compact++
	case c == '*' && tokenStart && i+1 < len(data) && !isSpaceOrFlow(data[i+1]):
		s.aliases++
		if s.aliases > maxAliases {
			return fmt.Sprintf("more than %d aliases; a workload needs a few: write the values out or merge fewer anchors", maxAliases)
		}
	default:
		return ""
	}
	if d := len(s.indents) + s.compact + s.flow; d > maxDepth {
		return fmt.Sprintf("nested more than %d levels deep; a workload nests about six: flatten this structure", maxDepth)
	}
	return ""
}

// block opens or closes block levels for a line whose content starts at indent.
func (s *shapeScanner) block(indent int) {
	for len(s.indents) > 0 && s.indents[len(s.indents)-1] > indent {
		s.indents = s.indents[:len(s.indents)-1]
	}
	if len(s.indents) == 0 || s.indents[len(s.indents)-1] < indent {
		s.indents = append(s.indents, indent)
	}
	s.compact = 0
}

// indicators are the characters that cannot start a plain scalar.
const indicators = "-?:,[]{}#&*!|>'\"%@`"

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isSpaceOrFlow(c byte) bool {
	return isSpace(c) || c == '[' || c == '{' || c == ',' || c == ']' || c == '}'
}
