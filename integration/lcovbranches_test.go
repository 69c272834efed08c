//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLCOVBranchesMatchLcov: patchprof's lcov export of --blocks holds,
// for each program, the very BRDA records lcov itself captures from a gcov
// build of the same source (lcov --capture --rc lcov_branch_coverage=1):
// the same lines, outcome numbers, order (gcov's: a condition's true arc
// first) and counts, "-" on a line that never ran. Switch statements are
// left out (cswitch.c): gcov counts a switch's arcs, patchprof its
// conditional jumps.
func TestLCOVBranchesMatchLcov(t *testing.T) {
	needs(t)
	mustHaveGcov(t)
	lcov, err := exec.LookPath("lcov")
	if err != nil {
		t.Skipf("lcov not found in PATH (%v): it captures the gcov build's branches (Debian package lcov)", err)
	}
	t.Parallel()
	for _, src := range []string{"branches.c", "shellsort.c", "calls.c", "rep.c"} {
		dir := gcovBuildRun(t, src, "-O0")
		capture := exec.Command(lcov, "--capture", "--rc", "lcov_branch_coverage=1", "-q", "-d", dir, "-o", filepath.Join(dir, "gcov.info"))
		if out, err := capture.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(capture.Args, " "), err, out)
		}
		want := brdaOf(t, filepath.Join(dir, "gcov.info"), src)
		if len(want) == 0 {
			t.Fatalf("%s: lcov captured no branches", src)
		}
		exe := buildC(t, src, "-g", "-O0")
		info := filepath.Join(t.TempDir(), "p.info")
		res := run(t, runOpts{args: []string{"--blocks", "--format", "lcov", "-o", info, exe}})
		wantExitCode(t, res, nil, 0)
		if got := brdaOf(t, info, src); !slices.Equal(got, want) {
			t.Errorf("%s: patchprof's BRDA records differ from lcov's capture of a gcov build:\npatchprof:\n%s\nlcov:\n%s",
				src, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// brdaOf returns the BRDA records of the section of an lcov tracefile
// whose source file is named src.
func brdaOf(t *testing.T, path, src string) []string {
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
		case in && strings.HasPrefix(l, "BRDA:"):
			out = append(out, l)
		}
	}
	return out
}
