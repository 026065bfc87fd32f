package workloads

import (
	"crypto/x509"
	"fmt"
	"io"
	"os"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/scanner"
	"github.com/goccy/go-yaml/token"
)

// Bounds on what a workload file may make the YAML parser and the decoder do, checked on the
// parser's own token stream and syntax tree (not on the raw bytes: a lexical pre-scan is fooled
// by a quote inside a block scalar, the issue-20 bypass). The parser's cost grows faster than
// the file: 32,000 nested "[" (64 KB) took it 2.2 GB and 39 s, and 60,000 keys 16 s, while the
// tokenizer reads a 1 MiB file in about 0.2 s. So the tokens are counted as the scanner hands
// them over and the parser never sees a file past a bound. A workload nests about six levels
// deep, uses a handful of aliases and a few hundred tokens.
const (
	maxDepth   = 64      // nesting of collections, block and flow together, aliases expanded
	maxAliases = 200     // *alias uses in one file
	maxTokens  = 100_000 // YAML tokens in one file (a key, a ":", a value: three)

	// maxDocuments bounds the "---" (and "...") markers: a workload is one document, and the
	// parser makes a node of each empty one (50,000 took 14 s to refuse as "target: missing").
	maxDocuments = 16

	// maxBlockKeys bounds the keys of one block mapping: go-yaml's parser reads a block
	// mapping by recursing once per key and copying the rest of it at each return, so its
	// cost grows with the square of the keys (20,000 took 1.5 s of CPU, 60,000 16 s).
	maxBlockKeys = 1000

	// MaxExpandedBytes bounds the size of the document once every alias is expanded (the
	// bytes of its scalars plus one per node): a 1 MiB file of aliases to one large value
	// must not turn into gigabytes for whoever reads it.
	MaxExpandedBytes = 4 << 20

	// MaxArgumentsBytes bounds a group's `arguments` as JSON, after alias expansion (and
	// before placeholders, which add a few digits each): every call marshals and sends them.
	MaxArgumentsBytes = 256 << 10

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

// tokenize runs go-yaml's scanner over src as its lexer.Tokenize does, checking each token as
// it comes: more than maxTokens tokens, more than maxAliases aliases or nesting deeper than
// maxDepth stops it, with the token where the bound was passed and what to do.
func tokenize(src string) (tokens token.Tokens, bad *token.Token, msg string) {
	var s scanner.Scanner
	s.Init(src)
	var sh shape
	for {
		sub, err := s.Scan()
		if err == io.EOF {
			return tokens, nil, ""
		}
		for _, tk := range sub {
			if m := sh.add(tk, len(tokens)); m != "" {
				return nil, tk, m
			}
			tokens.Add(tk)
		}
	}
}

// shape follows the nesting of a token stream: open flow brackets, and the block collections
// open at each indentation (a sequence may sit at its parent key's column, so the kind is kept).
type shape struct {
	docs    int
	flow    int
	block   []blockLevel
	aliases int
	prev    *token.Token // the last token that is not a comment: a block key before its ':'
}

type blockLevel struct {
	col  int
	seq  bool
	keys int // entries of a block mapping so far
}

func (s *shape) add(tk *token.Token, count int) string {
	if count >= maxTokens {
		return fmt.Sprintf("more than %d YAML tokens; a workload needs a few hundred: remove what the run does not read (an x- section too)", maxTokens)
	}
	prev := s.prev
	if tk.Type != token.CommentType {
		s.prev = tk
	}
	switch tk.Type {
	case token.DocumentHeaderType, token.DocumentEndType:
		if s.docs++; s.docs > maxDocuments {
			return fmt.Sprintf("more than %d YAML document markers (--- or ...); a workload file holds one document: remove the extra ones", maxDocuments)
		}
	case token.SequenceStartType, token.MappingStartType:
		s.flow++
	case token.SequenceEndType, token.MappingEndType:
		s.flow = max(s.flow-1, 0)
	case token.AliasType:
		if s.aliases++; s.aliases > maxAliases {
			return fmt.Sprintf("more than %d aliases; a workload needs a few: write the values out or merge fewer anchors", maxAliases)
		}
	case token.SequenceEntryType, token.MappingKeyType:
		if s.flow == 0 {
			s.open(column(tk), tk.Type == token.SequenceEntryType)
		}
	case token.MappingValueType:
		if s.flow == 0 && prev != nil && prev.Position != nil && tk.Position != nil && prev.Position.Line == tk.Position.Line {
			s.open(column(prev), false)
			if top := &s.block[len(s.block)-1]; !top.seq {
				if top.keys++; top.keys > maxBlockKeys {
					return fmt.Sprintf("a mapping with more than %d keys; a workload's largest has a few dozen: remove what the run does not read (an x- section too)", maxBlockKeys)
				}
			}
		}
	default:
		return ""
	}
	if len(s.block)+s.flow > maxDepth {
		return fmt.Sprintf("nested more than %d levels deep; a workload nests about six: flatten this structure", maxDepth)
	}
	return ""
}

// open notes a block collection entry at col: deeper levels close, and a new level opens
// unless one of the same kind is open at that column.
func (s *shape) open(col int, seq bool) {
	for len(s.block) > 0 {
		top := s.block[len(s.block)-1]
		if top.col < col || (top.col == col && top.seq == seq) {
			break
		}
		if top.col == col && seq { // "key:" then "- entry" at the key's column: one level more
			break
		}
		s.block = s.block[:len(s.block)-1]
	}
	if n := len(s.block); n == 0 || s.block[n-1].col != col || s.block[n-1].seq != seq {
		s.block = append(s.block, blockLevel{col: col, seq: seq})
	}
}

func column(tk *token.Token) int {
	if tk.Position == nil {
		return 0
	}
	return tk.Position.Column
}

// checkExpansion walks the document as a reader that expands every alias would, and reports
// the first place where its size passes MaxExpandedBytes or its nesting maxDepth. Each node's
// expanded size and depth are computed once (aliases repeat nodes, they do not repeat work).
// It returns false after a report.
func (d *decoder) checkExpansion(root ast.Node) bool {
	e := expansion{d: d, size: map[ast.Node]int64{}, depth: map[ast.Node]int{}}
	e.walk(root, 0)
	return !e.done
}

type expansion struct {
	d     *decoder
	size  map[ast.Node]int64
	depth map[ast.Node]int
	total int64
	done  bool // one report is enough: past a bound, the rest is not read
}

// walk adds n to the running total in document order; at an alias it adds the whole expanded
// size of the anchored node, so the report lands on the alias that passes the bound.
func (e *expansion) walk(n ast.Node, depth int) {
	if e.done || isNil(n) {
		return
	}
	if a, ok := n.(*ast.AliasNode); ok {
		t := e.d.aliases[a]
		if isNil(t) {
			return
		}
		e.total += e.measure(t)
		e.check(a, depth+e.levels(t))
		return
	}
	e.total += ownSize(n)
	kids := children(n)
	if len(kids) > 0 && isCollection(n) {
		depth++
	}
	if mv, ok := n.(*ast.MappingValueNode); ok && mv.Key != nil && mv.Key.IsMergeKey() {
		depth-- // "<<: *x" puts x's keys in this mapping: no level more
	}
	e.check(n, depth)
	for _, k := range kids {
		e.walk(k, depth)
	}
}

func (e *expansion) check(n ast.Node, depth int) {
	switch {
	case e.done:
	case e.total > MaxExpandedBytes:
		e.done = true
		e.d.errorf(n, "", "the document grows past %d bytes here once its aliases are expanded; a workload is a few kilobytes: write the value once, or use fewer aliases of large values", MaxExpandedBytes)
	case depth > maxDepth:
		e.done = true
		e.d.errorf(n, "", "nested more than %d levels deep once its aliases are expanded; a workload nests about six: flatten this structure", maxDepth)
	}
}

// measure is the expanded size of n, saturating at MaxExpandedBytes+1.
func (e *expansion) measure(n ast.Node) int64 {
	if isNil(n) {
		return 0
	}
	if v, ok := e.size[n]; ok {
		return v
	}
	e.size[n] = MaxExpandedBytes + 1 // a cycle (already reported) counts as too large
	var sz int64
	if a, ok := n.(*ast.AliasNode); ok {
		sz = e.measure(e.d.aliases[a])
	} else {
		sz = ownSize(n)
		for _, k := range children(n) {
			sz = min(sz+e.measure(k), MaxExpandedBytes+1)
		}
	}
	e.size[n] = sz
	return sz
}

// levels is how many collection levels n nests once expanded, saturating past maxDepth.
func (e *expansion) levels(n ast.Node) int {
	if isNil(n) {
		return 0
	}
	if v, ok := e.depth[n]; ok {
		return v
	}
	e.depth[n] = maxDepth + 1
	var lv int
	if a, ok := n.(*ast.AliasNode); ok {
		lv = e.levels(e.d.aliases[a])
	} else if mv, ok := n.(*ast.MappingValueNode); ok && mv.Key != nil && mv.Key.IsMergeKey() {
		lv = max(e.levels(mv.Value)-1, 0) // "<<: *x" puts x's keys in this mapping: no level more
	} else {
		for _, k := range children(n) {
			lv = max(lv, e.levels(k))
		}
		if isCollection(n) {
			lv = min(lv+1, maxDepth+1)
		}
	}
	e.depth[n] = lv
	return lv
}

func isCollection(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.SequenceNode:
		return true
	}
	return false
}

// ownSize is what n itself adds to the expanded document: its scalar text, plus one.
func ownSize(n ast.Node) int64 {
	switch v := n.(type) {
	case *ast.StringNode:
		return int64(len(v.Value)) + 1
	case *ast.LiteralNode:
		if v.Value != nil {
			return int64(len(v.Value.Value)) + 1
		}
	case *ast.MappingNode, *ast.SequenceNode, *ast.MappingValueNode, *ast.AnchorNode, *ast.TagNode, *ast.MappingKeyNode:
		return 1
	}
	if tk := n.GetToken(); tk != nil {
		return int64(len(tk.Value)) + 1
	}
	return 1
}

// children are the nodes n holds, in document order.
func children(n ast.Node) []ast.Node {
	switch v := n.(type) {
	case *ast.MappingNode:
		out := make([]ast.Node, 0, len(v.Values))
		for _, mv := range v.Values {
			out = append(out, mv)
		}
		return out
	case *ast.MappingValueNode:
		return []ast.Node{v.Key, v.Value}
	case *ast.SequenceNode:
		return v.Values
	case *ast.AnchorNode:
		return []ast.Node{v.Value}
	case *ast.TagNode:
		return []ast.Node{v.Value}
	case *ast.MappingKeyNode:
		return []ast.Node{v.Value}
	case *ast.DocumentNode:
		return []ast.Node{v.Body}
	}
	return nil
}
