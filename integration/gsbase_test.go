//go:build linux

package integration

import (
	"os"
	"strings"
	"testing"
)

// mustHaveFSGSBase skips a test of wrgsbase where the CPU or the kernel
// does not let programs run it (the program would die of SIGILL).
func mustHaveFSGSBase(t *testing.T, exe string) {
	t.Helper()
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil || !strings.Contains(string(b), " fsgsbase") {
		t.Skip("the CPU has no FSGSBASE (no fsgsbase flag in /proc/cpuinfo): wrgsbase would be SIGILL")
	}
	if out, _ := nativeRun(t, exe, "wrgsbase", "after"); strings.HasPrefix(out, "nofsgsbase") {
		t.Skip("the kernel does not enable FSGSBASE (AT_HWCAP2 has no HWCAP2_FSGSBASE; Linux 5.9 or later does)")
	}
}

// TestGSBaseAfterLaunch: a program that sets its own GS base after f was
// patched (arch_prctl, or wrgsbase where it runs) reads its GS area back
// as natively (no trampoline adds there), and f and g are counted exactly,
// through breakpoints from then on.
func TestGSBaseAfterLaunch(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "owngs.c", "-g", "-O0")
	for _, e := range engineList() {
		for _, how := range []string{"arch_prctl", "wrgsbase"} {
			t.Run(e+"/"+how, func(t *testing.T) {
				if how == "wrgsbase" {
					mustHaveFSGSBase(t, exe)
				}
				want, code := nativeRun(t, exe, how, "after")
				if want != "f=1010 g=10 gs_read_sum=0\n" || code != 0 {
					t.Fatalf("native: %q, status %d", want, code)
				}
				res, p := runProfile(t, runOpts{args: []string{"--engine=" + e, "--funcs", "--func", "^(f|g)$", exe, how, "after"}})
				wantExitCode(t, res, p, 0)
				if res.stdout != want {
					t.Errorf("%s: stdout %q, want the native %q", res.cmdline, res.stdout, want)
				}
				wantFunc(t, p, "f", 1010)
				wantFunc(t, p, "g", 10)
				if e == "jump" {
					wantOneNote(t, res.cmdline, p.Notes, "the program uses its own GS base")
				}
			})
		}
	}
}

// TestGSBaseBeforeAttach attaches to a program that set its GS base
// before: the in-process engine stays off, the calls made while attached
// are counted exactly, and after the detach the program still reads its
// own GS area (patchprof never touched its GS base).
func TestGSBaseBeforeAttach(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "owngs.c", "-g", "-O0")
	for _, e := range engineList() {
		for _, how := range []string{"arch_prctl", "wrgsbase"} {
			t.Run(e+"/"+how, func(t *testing.T) {
				if how == "wrgsbase" {
					mustHaveFSGSBase(t, exe)
				}
				target, in, sc := startPiped(t, exe, how, "attach")
				if !sc.Scan() || sc.Text() != "ready" {
					t.Fatalf("target did not start: %q", sc.Text())
				}
				notes := attachWindow(t, target.Process.Pid, e, in, sc)
				if e == "jump" {
					wantOneNote(t, "attach "+how, notes, "the program uses its own GS base")
				}
				in.Close()
				if !sc.Scan() || sc.Text() != "bye 3700 3 gs_read_sum=0" {
					t.Errorf("target said %q at its end, want \"bye 3700 3 gs_read_sum=0\"", sc.Text())
				}
				if err := target.Wait(); err != nil {
					t.Errorf("target after the detach: %v", err)
				}
			})
		}
	}
}

// TestJumpRefusedFirstPatchGS: a function whose patch is refused at its
// first hit (its code rewritten by the program) must not cost the thread
// the GS base it was given meanwhile: g, patched after, counts through
// it. Natively "a=7 b=49".
func TestJumpRefusedFirstPatchGS(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "gsrewrite.c", "-g", "-O0")
	for _, e := range engineList() {
		t.Run(e, func(t *testing.T) {
			res, p := runProfile(t, runOpts{args: []string{"--engine=" + e, "--funcs", "--func", "^(f|g)$", exe}})
			wantExitCode(t, res, p, 0)
			if res.stdout != "a=7 b=49\n" {
				t.Errorf("%s: stdout %q, want the native %q", res.cmdline, res.stdout, "a=7 b=49\n")
			}
			wantFunc(t, p, "f", 3)
			wantFunc(t, p, "g", 5)
		})
	}
}

// TestGSBaseWhileAttached: a program sets its GS base while patchprof is
// attached and f counts in the target: f goes back to breakpoints before
// the call returns, counted exactly; the detach leaves the program's GS
// base alone (it reads its own area back), as it finds it.
func TestGSBaseWhileAttached(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "owngs.c", "-g", "-O0")
	for _, how := range []string{"arch_prctl", "wrgsbase"} {
		t.Run(how, func(t *testing.T) {
			if how == "wrgsbase" {
				mustHaveFSGSBase(t, exe)
			}
			target, in, sc := startPiped(t, exe, how, "late")
			if !sc.Scan() || sc.Text() != "ready" {
				t.Fatalf("target did not start: %q", sc.Text())
			}
			notes := attachWindowWith(t, target.Process.Pid, "jump", in, sc, func(ask func(string, string)) {
				ask("1000", "done 1000 1500")
				ask("gs", "gs set")
				ask("2000", "done 2000 3500")
			})
			if how == "arch_prctl" {
				wantOneNote(t, "attach "+how, notes, "the program uses its own GS base")
			}
			in.Close()
			if !sc.Scan() || sc.Text() != "bye 3700 4 gs_read_sum=0" {
				t.Errorf("target said %q at its end, want \"bye 3700 4 gs_read_sum=0\"", sc.Text())
			}
			if err := target.Wait(); err != nil {
				t.Errorf("target after the detach: %v", err)
			}
		})
	}
}
