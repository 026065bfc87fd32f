package workloads

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem in a workload file, positioned at the offending key
// or value. Msg says what is wrong and, after a semicolon, what to do.
type Error struct {
	File      string
	Line, Col int    // 1-based; 0 for a mistake Validate found in a Workload, not in a file
	Field     string // e.g. "groups[1].clients"; empty for YAML syntax errors
	Msg       string
}

func (e *Error) Error() string {
	if e.Line == 0 { // found by Validate in a Workload, not placed in a file
		file := e.File
		if file == "" {
			file = "workload"
		}
		return fmt.Sprintf("%s: %s: %s", file, e.Field, e.Msg)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Col, e.Field, e.Msg)
}

// ValidationError is every problem found in one workload file, in file
// order. Load, Parse, Builtin and Resolve return it for any file that is not
// a valid workload, so a user can fix them all in one pass.
type ValidationError struct {
	Errs []*Error
}

func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		lines[i] = err.Error()
	}
	return strings.Join(lines, "\n")
}

// NotFoundError is returned by Resolve for an argument that is neither an
// existing file nor the name of a builtin workload.
type NotFoundError struct {
	Arg      string
	Builtins []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("workload %q: no such file and no builtin workload of that name; give a workload file path or one of: %s",
		e.Arg, strings.Join(e.Builtins, ", "))
}

// errorList collects a file's errors, bounded so that a hostile file cannot
// produce unbounded output.
type errorList struct {
	file    string
	errs    []*Error
	seen    map[errorKey]bool
	dropped int
}

// errorKey identifies a reported problem. A value reached through several
// aliases (or merges) is checked once per use; it is reported once.
type errorKey struct {
	line, col int
	msg       string
}

const maxErrors = 200

func (l *errorList) add(line, col int, field, msg string) {
	k := errorKey{line, col, msg}
	if l.seen[k] {
		return
	}
	if l.seen == nil {
		l.seen = map[errorKey]bool{}
	}
	l.seen[k] = true
	if len(l.errs) >= maxErrors {
		l.dropped++
		return
	}
	l.errs = append(l.errs, &Error{File: l.file, Line: line, Col: col, Field: field, Msg: msg})
}

// result is nil when nothing was collected, else a *ValidationError sorted
// by position (errors found in one pass but reported later, such as
// cross-references, land where they belong).
func (l *errorList) result() error {
	if len(l.errs) == 0 {
		return nil
	}
	errs := append([]*Error(nil), l.errs...)
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Line != errs[j].Line {
			return errs[i].Line < errs[j].Line
		}
		return errs[i].Col < errs[j].Col
	})
	if l.dropped > 0 {
		last := errs[len(errs)-1]
		errs = append(errs, &Error{File: l.file, Line: last.Line, Col: last.Col,
			Msg: fmt.Sprintf("%d more errors not shown; fix the ones above first", l.dropped)})
	}
	return &ValidationError{Errs: errs}
}
