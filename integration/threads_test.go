package integration

import (
	"strings"
	"testing"
)

// TestThreadsFuncs runs 4 threads that call work on the same sites at the
// same time, 25000 times each: while one thread steps over a site's
// original instruction, the others must still be counted.
func TestThreadsFuncs(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "threads.c", "-g", "-O0", "-pthread")
	res, p := runProfile(t, runOpts{args: []string{"--funcs", exe}})
	wantExitCode(t, res, p, 0)
	if !strings.Contains(res.stdout, "calls 100000\n") {
		t.Errorf("target's stdout %q, want \"calls 100000\"", res.stdout)
	}
	wantFunc(t, p, "work", 100000)
	wantFunc(t, p, "worker", 4)
	wantFunc(t, p, "main", 1)
}

// TestThreadsLines checks line counts of the threaded program against the
// known count of work's body and against gcov (built with atomic counter
// updates, so it is exact too). Every line is planted here, and each hit
// stops the other threads, so the threads make 5000 calls each, not 25000.
func TestThreadsLines(t *testing.T) {
	t.Parallel()
	g := gcovRun{src: "threads.c", flags: []string{"-pthread"}, args: []string{"5000"}}
	p := compareGcov(t, g, []string{"-g", "-O0", "-pthread"})
	wantLine(t, p, "threads.c", markerLine(t, "threads.c", "WORK_BODY"), 20000)
}
