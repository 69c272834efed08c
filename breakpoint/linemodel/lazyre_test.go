package linemodel

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLazyPrefix: every expression of the package (each lazyRE call in its
// files) answers every line of real C sources as regexp itself does, with
// the prefix check in front.
func TestLazyPrefix(t *testing.T) {
	fset := token.NewFileSet()
	pkgFiles, _ := filepath.Glob("*.go")
	var exprs []string
	for _, name := range pkgFiles {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if id, isID := func() (*ast.Ident, bool) {
				if !ok {
					return nil, false
				}
				id, ok := call.Fun.(*ast.Ident)
				return id, ok
			}(); isID && id.Name == "lazyRE" && len(call.Args) == 1 {
				if lit, ok := call.Args[0].(*ast.BasicLit); ok {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						exprs = append(exprs, s)
					}
				}
			}
			return true
		})
	}
	if len(exprs) < 30 {
		t.Fatalf("found %d expressions, want the package's (over 30)", len(exprs))
	}
	sources, _ := filepath.Glob("../../integration/testdata/*.c")
	more, _ := filepath.Glob("../../integration/testdata/*.cc")
	sources = append(sources, more...)
	var lines []string
	for _, s := range sources {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			lines = append(lines, l, strings.TrimSpace(l))
		}
	}
	// Lines no C file here begins with: empty, blank, non-ASCII, an
	// invalid byte.
	lines = append(lines, "", " ", "\t", "é = 1;", "\x80case 1:", "\xffif (x) {", "ü: break;")
	if len(lines) < 1000 {
		t.Fatalf("only %d lines of C to try", len(lines))
	}
	prefixed := 0
	for _, e := range exprs {
		l, re := lazyRE(e), regexp.MustCompile(e)
		l.get()
		if l.first != nil {
			prefixed++
		}
		for _, s := range lines {
			if got, want := l.MatchString(s), re.MatchString(s); got != want {
				t.Fatalf("%s on %q: MatchString %v, regexp %v", e, s, got, want)
			}
			if got, want := l.FindStringSubmatch(s), re.FindStringSubmatch(s); !slices.Equal(got, want) {
				t.Fatalf("%s on %q: FindStringSubmatch %q, regexp %q", e, s, got, want)
			}
		}
	}
	if prefixed == 0 {
		t.Fatal("no expression has first bytes to check: the check never runs")
	}
	t.Logf("%d expressions, %d with first bytes, %d lines", len(exprs), prefixed, len(lines))
}
