//go:build linux

package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// funcLines returns the first and last lines of the C or C++ function named
// name in testdata/src: from the unindented line naming it ("name(" at the
// start or after a space or "*", and not a declaration ending in ";") to
// its closing brace, a "}" alone at the start of a line.
func funcLines(t *testing.T, src, name string) (first, last int) {
	t.Helper()
	lines := sourceLines(t, filepath.Join(testdataDir, src))
	for i, l := range lines {
		if first == 0 && namesFunc(l, name) {
			first = i + 1
		}
		if first != 0 && l == "}" {
			return first, i + 1
		}
	}
	t.Fatalf("%s: no function %s", src, name)
	return 0, 0
}

// namesFunc reports whether the source line l begins a definition of the
// function name.
func namesFunc(l, name string) bool {
	if l == "" || l[0] == ' ' || l[0] == '\t' || strings.HasSuffix(strings.TrimSpace(l), ";") {
		return false
	}
	i := strings.Index(l, name+"(")
	return i == 0 || (i > 0 && (l[i-1] == ' ' || l[i-1] == '*'))
}

// TestSelectFunc checks --func: only the matching functions are planted,
// their counts stay exact, and the regexp is unanchored.
func TestSelectFunc(t *testing.T) {
	needs(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	t.Run("funcs", func(t *testing.T) {
		t.Parallel()
		res, p := runProfile(t, runOpts{args: []string{"--funcs", "--func", "^work$", exe}})
		wantExitCode(t, res, p, 0)
		wantFunc(t, p, "work", 1000)
		if len(p.Functions) != 1 {
			t.Errorf("--func '^work$' planted %d functions, want only work: %+v", len(p.Functions), p.Functions)
		}
	})
	t.Run("unanchored", func(t *testing.T) {
		t.Parallel()
		res, p := runProfile(t, runOpts{args: []string{"--funcs", "--func", "ib", exe}})
		wantExitCode(t, res, p, 0)
		wantFunc(t, p, "fib", 1973)
		for _, f := range p.Functions {
			if !strings.Contains(f.Name, "ib") {
				t.Errorf("--func ib planted %s", f.Name)
			}
		}
		if _, ok := funcCount(p, "work"); ok {
			t.Errorf("--func ib planted work")
		}
	})
	t.Run("lines", func(t *testing.T) {
		t.Parallel()
		res, p := runProfile(t, runOpts{args: []string{"--lines", "--func", "^work$", exe}})
		wantExitCode(t, res, p, 0)
		wantLine(t, p, "calls.c", markerLine(t, "calls.c", "WORK_BODY"), 1000)
		first, last := funcLines(t, "calls.c", "work")
		for _, l := range p.Lines {
			if filepath.Base(l.File) != "calls.c" || l.Line < first-1 || l.Line > last {
				t.Errorf("--lines --func '^work$': line %s:%d (count %d) is outside work (lines %d-%d)", l.File, l.Line, l.Count, first, last)
			}
		}
		// --lines alone: the selected function's calls are its entry
		// block's count, and no other function is listed.
		wantFunc(t, p, "work", 1000)
		for _, f := range p.Functions {
			if f.Name != "work" {
				t.Errorf("--lines --func '^work$': function %s (count %d) in the profile", f.Name, f.Count)
			}
		}
	})
}

// TestSelectFile checks --file with a base name and with globs over the
// base name and the absolute path.
func TestSelectFile(t *testing.T) {
	needs(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	abs := filepath.Join(testdataDir, "calls.c")
	for _, glob := range []string{"calls.c", "c*s.c", filepath.Join(testdataDir, "*.c")} {
		t.Run(strings.ReplaceAll(glob, "/", "_"), func(t *testing.T) {
			t.Parallel()
			res, p := runProfile(t, runOpts{args: []string{"--lines", "--file", glob, exe}})
			wantExitCode(t, res, p, 0)
			wantLine(t, p, "calls.c", markerLine(t, "calls.c", "WORK_BODY"), 1000)
			wantLine(t, p, "calls.c", markerLine(t, "calls.c", "FIB_TEST"), 1973)
			for _, l := range p.Lines {
				if l.File != abs {
					t.Errorf("--file %s: line of %s in the profile", glob, l.File)
					break
				}
			}
		})
	}
}

// TestSelectNothing checks a --file that matches no file. docs/cli.md does
// not say whether planting nothing is an error; either way is accepted, but
// an error must be patchprof's one-line error, and a run must profile
// nothing and still run the target.
func TestSelectNothing(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	save := filepath.Join(t.TempDir(), "p.json")
	res := run(t, runOpts{args: []string{"--lines", "--save", save, "--file", "nomatch*", exe}})
	if res.code == exitFailure {
		oneLineError(t, res)
		if res.stdout != "" {
			t.Errorf("%s: refused, yet the target ran: stdout %q", res.cmdline, res.stdout)
		}
		return
	}
	p, err := readProfile(save)
	if err != nil {
		t.Fatalf("%s: %v\n%s", res.cmdline, err, res)
	}
	wantExitCode(t, res, p, 0)
	if !strings.Contains(res.stdout, "sum 1499500 fib 610") {
		t.Errorf("target's stdout %q", res.stdout)
	}
	for _, l := range p.Lines {
		if l.Count != 0 || filepath.Base(l.File) == "calls.c" {
			t.Errorf("--file nomatch*: line %s:%d (count %d) in the profile", l.File, l.Line, l.Count)
		}
	}
	if len(p.Sites) != 0 {
		t.Errorf("--file nomatch*: %d sites planted", len(p.Sites))
	}
}
