//go:build linux

package integration

import (
	"fmt"
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
