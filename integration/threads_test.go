//go:build linux

package integration

import (
	"os"
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

// TestThreadsStress drives the same three sites from 8 threads at once,
// 5,000 iterations each: exact totals, and under the out-of-line engine no
// thread is ever held because of another's hit.
func TestThreadsStress(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "stress.c", "-g", "-O1", "-pthread")
	res, p := runProfile(t, runOpts{args: []string{"--funcs", "--func", "^[abc]$", "--pin=false", exe}})
	wantExitCode(t, res, p, 0)
	if res.stdout != "sink 240000\n" {
		t.Errorf("target's stdout %q, want \"sink 240000\\n\"", res.stdout)
	}
	for _, f := range []string{"a", "b", "c"} {
		wantFunc(t, p, f, 40000)
	}
	if e := os.Getenv(engineEnv); e != "classic" {
		for _, n := range p.Notes {
			if strings.Contains(n, "held") || strings.Contains(n, "classic cycle") {
				t.Errorf("under xol: %q", n)
			}
		}
	}
}

// TestNoEINTR: a thread asleep in epoll_wait while the main thread makes 64
// first calls. Each may stop the other threads (to patch a site under the
// in-process engine, at every hit under classic), and epoll_wait ends in
// EINTR after any stop; the program must never see one of ours (it counts
// them and exits 1 if it saw any). The ptrace fallback of --time, which
// stops threads to sample them, is held to the same.
func TestNoEINTR(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "eintr.c", "-g", "-O0", "-pthread")
	for _, o := range []runOpts{
		{args: []string{"--funcs", exe}},
		{args: []string{"--lines", "--funcs", "--time", "--sample-rate", "4000", exe}, env: refusePerf},
	} {
		for k := 0; k < 5; k++ {
			res, p := runProfile(t, o)
			wantExitCode(t, res, p, 0)
			if res.stdout != "woke 1\neintr 0\n" {
				t.Fatalf("%s: target's stdout %q, want \"woke 1\\neintr 0\\n\"", res.cmdline, res.stdout)
			}
			wantFunc(t, p, "f87", 1)
		}
	}
}
