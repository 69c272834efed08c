package integration

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// countWriters are the methods that change a run's counts in a site
// table (breakpoint.Table, breakpoint.Cursor): only the tracer calls them,
// and the package that defines them. Everyone else reads a copy
// (Table.Counts, monitor.Result.Counts, the snapshots).
var countWriters = map[string]bool{"AddHits": true, "AddArcHits": true, "Hit": true, "Unhit": true}

// countWriterPackages may call countWriters: the site table itself and
// the tracer.
var countWriterPackages = map[string]bool{"breakpoint": true, "monitor": true}

// TestCountWriters: no package but the tracer writes a count (tracker
// issue 25): a call of a count-writing method from any other package's
// non-test code fails.
func TestCountWriters(t *testing.T) {
	root, pkgs := modulePackages(t)
	fset := token.NewFileSet()
	for _, pkg := range pkgs {
		rel, err := filepath.Rel(root, pkg.dir)
		if err != nil {
			t.Fatal(err)
		}
		rel = filepath.ToSlash(rel)
		if countWriterPackages[rel] || rel == "integration" {
			continue
		}
		for _, name := range pkg.files {
			f, err := parser.ParseFile(fset, filepath.Join(pkg.dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && countWriters[sel.Sel.Name] {
						t.Errorf("%s: %s/%s calls %s, which writes a run's counts: only the tracer may (read Table.Counts)",
							fset.Position(call.Pos()), rel, name, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}
