//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLCOVFunctionsLinesOnly: `--lines --format lcov` without --funcs
// writes the function records lcov itself captures from a gcov build of
// the same source (lcov --capture): each function's FN (declarator line
// and name) and FNDA (its calls, the count of its entry block, no function
// site planted), and genhtml then reports the functions ("functions..:
// X% (N of M functions)") instead of "no data found".
func TestLCOVFunctionsLinesOnly(t *testing.T) {
	needs(t)
	mustHaveGcov(t)
	lcov, err := exec.LookPath("lcov")
	if err != nil {
		t.Skipf("lcov not found in PATH (%v): it captures the gcov build's functions (Debian package lcov)", err)
	}
	genhtml, err := exec.LookPath("genhtml")
	if err != nil {
		t.Skipf("genhtml not found in PATH (%v): Debian package lcov", err)
	}
	t.Parallel()
	for _, src := range []string{"calls.c", "shellsort.c"} {
		dir := gcovBuildRun(t, src, "-O0")
		capture := exec.Command(lcov, "--capture", "-q", "-d", dir, "-o", filepath.Join(dir, "gcov.info"))
		if out, err := capture.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(capture.Args, " "), err, out)
		}
		want := fnRecordsOf(t, filepath.Join(dir, "gcov.info"), src)
		if len(want) == 0 {
			t.Fatalf("%s: lcov captured no functions", src)
		}
		exe := buildC(t, src, "-g", "-O0")
		out := t.TempDir()
		info := filepath.Join(out, "p.info")
		res := run(t, runOpts{args: []string{"--lines", "--format", "lcov", "-o", info, exe}})
		wantExitCode(t, res, nil, 0)
		got := fnRecordsOf(t, info, src)
		if !slices.Equal(got, want) {
			t.Errorf("%s: patchprof --lines's function records differ from lcov's capture of a gcov build:\npatchprof:\n%s\nlcov:\n%s",
				src, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		hit := 0
		for _, r := range got {
			if strings.HasPrefix(r, "FNDA:") && !strings.HasPrefix(r, "FNDA:0,") {
				hit++
			}
		}
		html, err := exec.Command(genhtml, "-o", filepath.Join(out, "html"), info).CombinedOutput()
		if err != nil {
			t.Fatalf("genhtml: %v\n%s", err, html)
		}
		summary := fmt.Sprintf("(%d of %d functions)", hit, len(got)/2)
		if !strings.Contains(string(html), "functions..: ") || !strings.Contains(string(html), summary) {
			t.Errorf("%s: genhtml's summary lacks functions..: %s:\n%s", src, summary, html)
		}
	}
}

// fnRecordsOf returns the FN and FNDA records of the section of an lcov
// tracefile whose source file is named src, sorted (lcov and patchprof
// may list functions in different orders).
func fnRecordsOf(t *testing.T, path, src string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "SF:"):
			in = filepath.Base(strings.TrimPrefix(l, "SF:")) == src
		case in && (strings.HasPrefix(l, "FN:") || strings.HasPrefix(l, "FNDA:")):
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
