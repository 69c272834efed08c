package integration

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docMapPending lists the packages (directories relative to the module root)
// whose doc.go file maps are still being written. TestDocMap skips them,
// and fails once one of them has a complete map, so that it leaves the set.
// Keep it empty.
var docMapPending = map[string]bool{}

// docFileName matches a Go file name in a comment. A name written with a
// directory ("symtab/insnlen.go") matches with it, and so is told apart from
// a file of the package itself; of a pattern ("*_test.go") it matches the
// part after the star.
var docFileName = regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.go\b`)

// TestDocMap requires every package of the module to have a doc.go whose
// package comment names each of the package's non-test .go files (a file map,
// so that a reader finds where a concern lives), and to name no .go file the
// directory does not hold. Test files, and doc.go itself, need not be listed.
func TestDocMap(t *testing.T) {
	root, pkgs := modulePackages(t)
	var problems []string
	for _, pkg := range pkgs {
		rel, err := filepath.Rel(root, pkg.dir)
		if err != nil {
			t.Fatal(err)
		}
		rel = filepath.ToSlash(rel)
		missing, stale, err := checkDocMap(pkg)
		if docMapPending[rel] {
			if err == nil && len(missing) == 0 && len(stale) == 0 {
				problems = append(problems, fmt.Sprintf("%s/doc.go's file map is complete: remove %q from docMapPending in integration/docmap_test.go", rel, rel))
				continue
			}
			t.Run(rel, func(t *testing.T) {
				t.Skipf("%s/doc.go's file map is being written (docMapPending in integration/docmap_test.go)", rel)
			})
			continue
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, fmt.Sprintf("%s has no doc.go: create %s/doc.go with the package comment and a file map naming %s", rel, rel, strings.Join(pkg.files, ", ")))
			continue
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s/doc.go: %v", rel, err))
			continue
		}
		for _, f := range missing {
			problems = append(problems, fmt.Sprintf("%s/doc.go does not name %s: add a line for %s to %s/doc.go's file map", rel, f, f, rel))
		}
		for _, f := range stale {
			problems = append(problems, fmt.Sprintf("%s/doc.go names %s, which is not a file of %s: remove it from the file map or correct the name", rel, f, rel))
		}
	}
	if len(problems) > 0 {
		t.Errorf("package file maps are out of date (the package comment in each doc.go names every non-test .go file of its directory):\n\t%s", strings.Join(problems, "\n\t"))
	}
}

// A goPackageDir is a directory of the module holding Go code.
type goPackageDir struct {
	dir   string
	files []string // base names of the non-test .go files, sorted
	all   map[string]bool
}

// docMapRoot is the directory holding the module's go.mod: the first
// directory upward from the test's working directory (the package
// directory, under go test) that has one. It reads no environment, so the
// test builds and runs on every OS.
// modulePackages returns the module's root and its packages.
func modulePackages(t *testing.T) (string, []goPackageDir) {
	t.Helper()
	root, err := docMapRoot()
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := goPackageDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, pkgs
}

func docMapRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory: run the test with go test from inside the module")
		}
		dir = parent
	}
}

// goPackageDirs walks the module from root and returns the directories with
// at least one non-test .go file, as the go command sees them: testdata,
// directories whose names begin with "." or "_", and nested modules are
// not part of the module.
func goPackageDirs(root string) ([]goPackageDir, error) {
	var pkgs []goPackageDir
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root {
			name := d.Name()
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		pkg := goPackageDir{dir: path, all: map[string]bool{}}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				continue
			}
			pkg.all[name] = true
			if !strings.HasSuffix(name, "_test.go") {
				pkg.files = append(pkg.files, name)
			}
		}
		if len(pkg.files) > 0 {
			sort.Strings(pkg.files)
			pkgs = append(pkgs, pkg)
		}
		return nil
	})
	return pkgs, err
}

// checkDocMap reads the package comment of pkg's doc.go and returns the
// non-test files other than doc.go it does not name, and the names of .go files without a
// directory that it gives but pkg does not hold (test files count as held).
// The error wraps fs.ErrNotExist when there is no doc.go.
func checkDocMap(pkg goPackageDir) (missing, stale []string, err error) {
	path := filepath.Join(pkg.dir, "doc.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return nil, nil, err
	}
	if f.Doc == nil {
		return nil, nil, fmt.Errorf("no package comment: write one above the package clause, saying what the package owns, with a file map")
	}
	named := map[string]bool{}
	for _, name := range docFileName.FindAllString(f.Doc.Text(), -1) {
		if strings.Contains(name, "/") || strings.HasPrefix(name, "_") {
			// Another directory's file, or the tail of a pattern
			// ("*_test.go"): no file of the package starts with "_".
			continue
		}
		if !named[name] && !pkg.all[name] {
			stale = append(stale, name)
		}
		named[name] = true
	}
	for _, name := range pkg.files {
		if !named[name] && name != "doc.go" {
			missing = append(missing, name)
		}
	}
	return missing, stale, nil
}
