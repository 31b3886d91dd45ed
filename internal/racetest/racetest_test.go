package racetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoRaceListIsComplete: every test that calls SequentialOnly (and so is
// skipped under -race) is in the Makefile's NORACE list and its package in
// NORACE_PKGS, so `make test` still runs it; and every name in NORACE is a
// test that exists, so the list cannot rot.
func TestNoRaceListIsComplete(t *testing.T) {
	root := filepath.Join("..", "..")
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	names := makeVar(t, string(mk), "NORACE", "|")
	pkgs := makeVar(t, string(mk), "NORACE_PKGS", " ")

	tests := map[string]string{} // every Test func -> its package dir
	var sequential []string      // "dir TestX" of those calling SequentialOnly
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		dir := "./" + filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			tests[fn.Name.Name] = dir
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "SequentialOnly" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "racetest" {
						sequential = append(sequential, dir+" "+fn.Name.Name)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sequential) == 0 {
		t.Fatal("no test calls racetest.SequentialOnly: the scan is broken")
	}
	for _, s := range sequential {
		dir, name, _ := strings.Cut(s, " ")
		if !names[name] {
			t.Errorf("%s in %s calls racetest.SequentialOnly but is not in the Makefile's NORACE list: make test would never run it", name, dir)
		}
		if !pkgs[dir] {
			t.Errorf("%s calls racetest.SequentialOnly but its package %s is not in the Makefile's NORACE_PKGS", name, dir)
		}
	}
	for name := range names {
		if _, ok := tests[name]; !ok {
			t.Errorf("the Makefile's NORACE names %s, which no test defines", name)
		}
	}
}

// makeVar returns the words of `NAME := …` in the Makefile (sep-separated).
func makeVar(t *testing.T, mk, name, sep string) map[string]bool {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + `\s*:=\s*(.*)$`).FindStringSubmatch(mk)
	if m == nil {
		t.Fatalf("the Makefile has no %s := line", name)
	}
	out := map[string]bool{}
	for _, w := range strings.Split(m[1], sep) {
		if w = strings.TrimSpace(w); w != "" {
			out[w] = true
		}
	}
	return out
}
