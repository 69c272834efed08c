//go:build linux

package integration

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestFork checks that a forked child is counted too (and does not die on
// a breakpoint it inherited): f runs 300 times in the child and 200 in the
// parent.
func TestFork(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "fork.c", "-g", "-O0")
	t.Run("funcs", func(t *testing.T) {
		res, p := runProfile(t, runOpts{args: []string{"--funcs", exe}})
		wantExitCode(t, res, p, 0)
		if res.stdout != "parent done\n" {
			t.Errorf("target's stdout %q, want \"parent done\\n\"", res.stdout)
		}
		wantFunc(t, p, "f", 500)
		wantFunc(t, p, "main", 1)
	})
	t.Run("lines", func(t *testing.T) {
		res, p := runProfile(t, runOpts{args: []string{"--lines", exe}})
		wantExitCode(t, res, p, 0)
		if res.stdout != "parent done\n" {
			t.Errorf("target's stdout %q, want \"parent done\\n\"", res.stdout)
		}
		wantLine(t, p, "fork.c", markerLine(t, "fork.c", "F_BODY"), 500)
	})
	t.Run("no-follow", func(t *testing.T) {
		// The child gets its original code back and runs untraced: it
		// still calls f 300 times (and exits 0, or the parent would not
		// print), but only the parent's 200 are counted.
		res, p := runProfile(t, runOpts{args: []string{"--funcs", "--no-follow", exe}})
		wantExitCode(t, res, p, 0)
		if res.stdout != "parent done\n" {
			t.Errorf("target's stdout %q, want \"parent done\\n\"", res.stdout)
		}
		wantFunc(t, p, "f", 200)
	})
}

// TestVfork checks vfork followed by exec in the child: the child shares
// the parent's (patched) memory until its exec, then runs /bin/echo; the
// parent goes on to call f 100 times.
func TestVfork(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "vfork.c", "-g", "-O0")
	for _, mode := range []string{"--funcs", "--lines"} {
		res, p := runProfile(t, runOpts{args: []string{mode, exe}})
		wantExitCode(t, res, p, 0)
		if !strings.Contains(res.stdout, "hello-from-exec\n") || !strings.HasSuffix(res.stdout, "parent done\n") {
			t.Errorf("%s: target's stdout %q, want hello-from-exec then parent done", res.cmdline, res.stdout)
		}
		if mode == "--funcs" {
			wantFunc(t, p, "f", 100)
			wantFunc(t, p, "main", 1)
		} else {
			wantLine(t, p, "vfork.c", markerLine(t, "vfork.c", "F_BODY"), 100)
		}
	}
}

// TestCloneVMNoFollow: a child made by clone(CLONE_VM | SIGCHLD) shares its
// parent's memory, so --no-follow cannot let it go without taking the int3s
// from its parent: it is served as a thread, and both stay exact.
func TestCloneVMNoFollow(t *testing.T) {
	needs(t)
	exe := buildC(t, "clonevm.c", "-g", "-O0")
	for _, flags := range [][]string{{"--funcs"}, {"--funcs", "--no-follow"}} {
		t.Run(strings.Join(flags, ""), func(t *testing.T) {
			t.Parallel()
			res, p := runProfile(t, runOpts{args: append(append([]string{}, flags...), exe)})
			wantExitCode(t, res, p, 0)
			if want := fmt.Sprintf("sink %d\n", 45+110*109/2); res.stdout != want {
				t.Errorf("target printed %q, want %q", res.stdout, want)
			}
			wantFunc(t, p, "g", 10)
			wantFunc(t, p, "f", 110)
		})
	}
}

// TestForkLazyFunction: under the in-process engine a function is planned
// at its first hit, and its derived sites, planted at the start with the
// others, get their bytes back in each process the first time it traps
// there. work runs 100,000 times (2,000 under the trap engines) round its
// loop in a forked child and in
// its parent, the child first or the parent first (the child then has the
// parent's code, already put back): the counts are exact, and the run
// traps far fewer times than the loop runs (a derived site left planted
// in one process would trap at each of its 50,000 hits).
func TestForkLazyFunction(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "forklazy.c", "-g", "-O0")
	jump := os.Getenv(engineEnv) == "" || os.Getenv(engineEnv) == "jump"
	n := 100000
	if !jump {
		n = 2000 // every hit traps
	}
	for _, order := range []string{"child-first", "parent-first"} {
		t.Run(order, func(t *testing.T) {
			res, p := runProfile(t, runOpts{args: []string{"--lines", "--funcs", exe, strconv.Itoa(n), order}})
			wantExitCode(t, res, p, 0)
			if res.stdout != "done\n" {
				t.Errorf("target's stdout %q, want \"done\\n\"", res.stdout)
			}
			wantFunc(t, p, "work", 2)
			wantLine(t, p, "forklazy.c", markerLine(t, "forklazy.c", "ODD_BODY"), int64(n))
			wantLine(t, p, "forklazy.c", markerLine(t, "forklazy.c", "EVEN_BODY"), int64(n))
			wantLine(t, p, "forklazy.c", markerLine(t, "forklazy.c", "LOOP"), int64(2*(n+1)))
			if !jump {
				return
			}
			wantFewTraps(t, res, p, 10)
		})
	}
}
