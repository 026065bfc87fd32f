// Package funclen finds the functions of a Go tree that do not fit on a screen: longer than a
// limit, counted from the line of func to the line of its closing brace, tests left out. Its
// test holds the module to the house's limit (80 lines) with the functions still over it
// listed by name, so that none grows and no new one joins them.
package funclen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// Func is one function over the limit.
type Func struct {
	Name  string // "pkg/dir.Func" or "pkg/dir.(*Type).Method", the directory relative to root
	File  string // relative to root
	Line  int
	Lines int
}

// Long lists the functions (methods and function literals' enclosing functions alike) of the
// non-test Go files under root that span more than limit lines, longest first. Directories
// named testdata, vendor or node_modules, and hidden ones, are skipped.
func Long(root string, limit int) ([]Func, error) {
	var out []Func
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			from, to := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
			if n := to - from + 1; n > limit {
				name := funcName(fn)
				if dir := filepath.ToSlash(filepath.Dir(rel)); dir != "." {
					name = dir + "." + name
				}
				out = append(out, Func{Name: name, File: filepath.ToSlash(rel), Line: from, Lines: n})
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Lines != out[j].Lines {
			return out[i].Lines > out[j].Lines
		}
		return out[i].Name < out[j].Name
	})
	return out, err
}

// funcName is Func, or (Type).Method and (*Type).Method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if g, ok := t.(*ast.IndexListExpr); ok {
		t = g.X
	}
	id, _ := t.(*ast.Ident)
	recv := "?"
	if id != nil {
		recv = id.Name
	}
	return "(" + star + recv + ")." + fn.Name.Name
}
