package workloads

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// MaxFileSize is the largest workload file accepted (1 MiB); real ones are a
// few kilobytes.
const MaxFileSize = 1 << 20

// utf8BOM is the byte-order mark some editors put at the start of a UTF-8 file.
var utf8BOM = []byte("\ufeff")

var workloadSchema = schema{extensions: true, keys: []schemaKey{
	{"name", "name the workload with lowercase letters, digits, - and _, e.g. name: seed-incident"},
	{"description", "describe in a sentence what the workload shows"},
	{"target", "describe the server under test, e.g. target: {builtin: {session_ttl: 30m}}"},
	{"phases", "list the phases of the run, each with a name, a duration and calls: true or false"},
	{"groups", "list the client groups, each with a name, clients and a policy (naive or probe)"},
	{"faults", "list the faults to inject, each with a toxic and a time window (at, for)"},
	{"toxiproxy", "give the URL of a toxiproxy-server to put the proxies on, e.g. toxiproxy: http://127.0.0.1:8474 (default: Toxiproxy embedded in mcpchaos)"},
	{"thresholds", "list pass/fail conditions on the results, e.g. - probe.misattributed_errors == 0"},
	{"steady_state", "list probes of the system's health, e.g. steady_state: {probes: [{name: healthz, when: [before, after], http: {url: \"{{target}}/healthz\"}}]}"},
	{"rollbacks", "list actions that undo the run's changes at its end, e.g. rollbacks: [{exec: {command: ./rollback.sh}}]"},
}}

// Load reads and validates the workload file at path. A file that is not a
// valid workload gives a *ValidationError listing every problem; a file that
// cannot be read gives the error from the file system.
func Load(path string) (*Workload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse validates a workload file's contents; name is the file's name as it
// should appear in error positions and in Workload.Source.
func Parse(name string, data []byte) (w *Workload, err error) {
	d := &decoder{errorList: errorList{file: name}}
	defer func() {
		// Parsing must never take the process down, whatever the input; a
		// panic here is a bug, reported as such and caught by FuzzLoad.
		if r := recover(); r != nil {
			w = nil
			err = &ValidationError{Errs: []*Error{{File: name, Line: 1, Col: 1,
				Msg: fmt.Sprintf("internal error reading this file (%v); please report it with the file", r)}}}
		}
	}()
	if len(data) > MaxFileSize {
		d.add(1, 1, "", fmt.Sprintf("file is larger than %d bytes; a workload file should be a few kilobytes", MaxFileSize))
		return nil, d.result()
	}
	if !utf8.Valid(data) {
		line, col := invalidUTF8(data)
		d.add(line, col, "", "file is not valid UTF-8; save it as UTF-8 text")
		return nil, d.result()
	}
	data = bytes.TrimPrefix(data, utf8BOM) // editors on Windows save one; YAML allows it
	body, ok := d.parseYAML(data)
	if !ok {
		return nil, d.result()
	}
	w = d.workload(body)
	if err := d.result(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	w.Source = name
	w.Hash = "sha256:" + hex.EncodeToString(sum[:])
	if err := w.Validate(); err != nil { // the decoder placed every mistake it knows; this is the rest
		return nil, err
	}
	w.decodedAs = w.fingerprint()
	return w, nil
}

// parseYAML parses data into the body of its first document, reporting
// extra documents and broken aliases. After a syntax error (ok false) there
// is nothing to decode.
func (d *decoder) parseYAML(data []byte) (body ast.Node, ok bool) {
	tokens, bad, msg := tokenize(string(data))
	if bad != nil {
		line, col := 1, 1
		if bad.Position != nil {
			line, col = max(bad.Position.Line, 1), max(bad.Position.Column, 1)
		}
		d.add(line, col, "", msg)
		return nil, false
	}
	file, err := parser.Parse(tokens, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		d.syntaxError(err)
		return nil, false
	}
	for _, doc := range file.Docs {
		if isNil(doc) || isNil(doc.Body) {
			continue
		}
		if _, ok := doc.Body.(*ast.DirectiveNode); ok {
			continue // %YAML 1.2, %TAG: the parser has applied them
		}
		if body != nil {
			d.errorf(doc, "", "a second YAML document starts here; a workload file holds one document: remove this --- and what follows")
			break
		}
		body = doc.Body
	}
	if body != nil {
		d.collectAliases(body)
		if !d.checkExpansion(body) {
			return nil, false // decoding it would cost what the bound is there to spare
		}
	}
	return body, true
}

type yamlError interface {
	GetToken() *token.Token
	GetMessage() string
}

func (d *decoder) syntaxError(err error) {
	line, col, msg := 1, 1, err.Error()
	var ye yamlError
	if errors.As(err, &ye) {
		msg = ye.GetMessage()
		if tk := ye.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line > 0 {
			line, col = tk.Position.Line, max(tk.Position.Column, 1)
		}
	}
	fix := "fix the YAML here: check the indentation, and quote values containing \": \" or \" #\""
	if strings.Contains(msg, "'\t'") || strings.Contains(msg, "tab") {
		fix = "YAML does not allow tabs for indentation; indent with spaces"
	}
	d.add(line, col, "", fmt.Sprintf("YAML syntax error: %s; %s", msg, fix))
}

// invalidUTF8 is the position of the first byte that is not UTF-8.
func invalidUTF8(data []byte) (line, col int) {
	line, col = 1, 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size <= 1 {
			return line, col
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		data = data[size:]
	}
	return line, col
}

// workload decodes the top level. Sections are decoded in dependency order
// (the target's TTL resolves phase durations; phases give the run length
// that groups and faults are checked against; faults name groups), whatever
// their order in the file.
func (d *decoder) workload(body ast.Node) *Workload {
	w := &Workload{}
	if isNil(body) {
		d.add(1, 1, "", "file is empty; a workload needs at least name, target, phases and groups")
		return w
	}
	m := d.mapping(body, "", &workloadSchema)
	if f := m.require("name"); f != nil {
		w.Name, _ = d.name(f)
	}
	w.Description = m.str("description", "")

	var ttlOK bool
	if f := m.require("target"); f != nil {
		w.Target, ttlOK = d.target(f)
	}
	if f := m.field("toxiproxy"); f != nil {
		w.Toxiproxy = d.toxiproxyURL(f)
	}
	var run runLength
	if f := m.require("phases"); f != nil {
		w.Phases, w.ttlOffsets, run = d.phases(f, w.Target.SessionTTL, ttlOK)
		w.Duration = run.d
		for _, p := range w.Phases {
			d.phaseNames = append(d.phaseNames, p.Name)
		}
	}
	if f := m.require("groups"); f != nil {
		w.Groups = d.groups(f, run)
		w.clientsWhere = d.clientsWhere
	}
	groupsOK := m.field("groups") != nil && len(w.Groups) > 0
	faultErrs := len(d.errs)
	if f := m.field("faults"); f != nil {
		w.Faults = d.faults(f, run, w.Groups, groupsOK)
	}
	faultsOK := len(d.errs) == faultErrs // a broken faults list is not named again
	if f := m.field("thresholds"); f != nil {
		w.Thresholds = d.thresholds(f, w.Groups, groupsOK)
	}
	if f := m.field("steady_state"); f != nil {
		w.SteadyState = d.steadyState(f, w.Target, w.Faults, faultsOK)
	}
	if f := m.field("rollbacks"); f != nil {
		w.Rollbacks = d.rollbacks(f, w.Faults, faultsOK)
	}
	return w
}

// runLength is the planned run time, when the phases could be resolved.
type runLength struct {
	d     time.Duration
	known bool
}

// name checks a name that becomes part of identifiers (proxies, columns,
// files): lowercase letters, digits, - and _.
func (d *decoder) name(f *field) (string, bool) {
	s, ok := d.str(f)
	if !ok {
		return "", false
	}
	switch {
	case s == "":
		d.errorf(f.node, f.path, "is empty; %s", f.hint)
	case len(s) > maxNameLen:
		d.errorf(f.node, f.path, "is %d characters long, more than %d; use a shorter name", len(s), maxNameLen)
	case !validName(s):
		d.errorf(f.node, f.path, "%q may only contain lowercase letters, digits, - and _; rename it, e.g. %q", s, suggestName(s))
	default:
		return s, true
	}
	return "", false
}

func validName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return s != ""
}

func suggestName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "my-name"
	}
	if len(out) > maxNameLen {
		out = out[:maxNameLen]
	}
	return out
}
