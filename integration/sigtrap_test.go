//go:build linux

package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Every int3 of ours is a forced SIGTRAP, and the kernel resets a blocked or
// ignored SIGTRAP to its default (and unblocks it) when one fires. The
// sigtrap target checks its own SIGTRAP action and mask at every call of f,
// the function patchprof counts; these tests hold patchprof to the native
// run: the same output, the same exit, and f's exact count.

// nativeRun runs exe with args without patchprof and returns its stdout and
// exit status (128+N for a signal), the oracle of the tests below.
func nativeRun(t *testing.T, exe string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(exe, args...)
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return string(out), 128 + int(ws.Signal())
		}
		return string(out), ee.ExitCode()
	}
	t.Fatalf("%s %v: %v", exe, args, err)
	return "", 0
}

// TestSigtrapKept runs the target with SIGTRAP ignored, blocked around the
// counted calls, and handled by a handler that itself calls f while the
// program's own int3 traps run it: every run prints what it prints natively,
// with no mismatch seen by the program.
func TestSigtrapKept(t *testing.T) {
	needs(t)
	exe := buildC(t, "sigtrap.c", "-g", "-O0")
	for _, c := range []struct {
		mode  string
		calls int64
	}{{"ign", 100}, {"block", 100}, {"handler", 2}} {
		want, wantCode := nativeRun(t, exe, c.mode)
		if wantCode != 0 || !strings.Contains(want, "mismatches 0") {
			t.Fatalf("sigtrap %s natively: exit %d, %q", c.mode, wantCode, want)
		}
		for _, flags := range [][]string{{"--funcs"}, {"--lines", "--funcs"}} {
			t.Run(c.mode+strings.Join(flags, ""), func(t *testing.T) {
				t.Parallel()
				args := append(append([]string{}, flags...), exe, c.mode)
				res, p := runProfile(t, runOpts{args: args})
				wantExitCode(t, res, p, 0)
				if res.stdout != want {
					t.Errorf("target printed %q under patchprof, %q natively", res.stdout, want)
				}
				wantFunc(t, p, "f", c.calls)
			})
		}
	}
}

// TestSigtrapChanges: the program changes its SIGTRAP state after the
// start, and a function first runs (a breakpoint under every engine) in
// the new state: ignored, then blocked by a mask (late); blocked by a
// handler's sa_mask (mask); blocked by the mask rt_sigreturn restores,
// which the handler changed in its context (sigreturn). The program sees
// what it set at every call, and the counts are exact. Under the jump
// engine the threads stop only at the system calls its seccomp filter
// traces, which must include every call that changes that state.
func TestSigtrapChanges(t *testing.T) {
	needs(t)
	exe := buildC(t, "sigtrap.c", "-g", "-O0")
	for _, c := range []struct {
		mode  string
		calls map[string]int64
	}{
		{"late", map[string]int64{"f": 10, "late1": 10, "late2": 10}},
		{"mask", map[string]int64{"late1": 5, "usr1_blocks_trap": 1, "on_trap": 1}},
		{"sigreturn", map[string]int64{"late2": 5, "usr1_sets_mask": 1, "on_trap": 1}},
	} {
		want, wantCode := nativeRun(t, exe, c.mode)
		if wantCode != 0 || !strings.Contains(want, "mismatches 0") {
			t.Fatalf("sigtrap %s natively: exit %d, %q", c.mode, wantCode, want)
		}
		for _, flags := range [][]string{{"--funcs"}, {"--lines", "--funcs"}} {
			t.Run(c.mode+strings.Join(flags, ""), func(t *testing.T) {
				t.Parallel()
				args := append(append([]string{}, flags...), exe, c.mode)
				res, p := runProfile(t, runOpts{args: args})
				wantExitCode(t, res, p, 0)
				if res.stdout != want {
					t.Errorf("target printed %q under patchprof, %q natively", res.stdout, want)
				}
				for fn, n := range c.calls {
					wantFunc(t, p, fn, n)
				}
			})
		}
	}
}

// TestSigtrapIcebp: an int1 (icebp) where patchprof plants kills the
// program with SIGTRAP, as natively, after counting the function once.
func TestSigtrapIcebp(t *testing.T) {
	needs(t)
	exe := buildC(t, "sigtrap.c", "-g", "-O0")
	if _, code := nativeRun(t, exe, "icebp"); code != 128+int(syscall.SIGTRAP) {
		t.Fatalf("sigtrap icebp natively exits %d, want %d", code, 128+int(syscall.SIGTRAP))
	}
	res, p := runProfile(t, runOpts{args: []string{"--funcs", exe, "icebp"}})
	if res.code != 128+int(syscall.SIGTRAP) {
		t.Fatalf("patchprof exit %d, want %d (killed by SIGTRAP)\n%s", res.code, 128+int(syscall.SIGTRAP), res)
	}
	if strings.Contains(res.stdout, "swallowed") {
		t.Errorf("the int1 was swallowed: %q", res.stdout)
	}
	wantFunc(t, p, "icebp", 1)
}

// signalState is the SigBlk, SigIgn and SigCgt lines of a process's status.
func signalState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		for _, k := range []string{"SigBlk:", "SigIgn:", "SigCgt:"} {
			if strings.HasPrefix(l, k) {
				keep = append(keep, l)
			}
		}
	}
	return strings.Join(keep, "\n")
}

// TestAttachSigtrapIgnored attaches to a process that ignores SIGTRAP while
// it calls f, detaches, and checks that its signal state is as before and
// that a SIGTRAP sent after the detach is still ignored.
func TestAttachSigtrapIgnored(t *testing.T) {
	needs(t)
	exe := buildC(t, "sigtrap.c", "-g", "-O0")
	target, in, sc := startPiped(t, exe, "wait")
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("target did not start: %q", sc.Text())
	}
	pid := target.Process.Pid
	before := signalState(t, pid)
	save := filepath.Join(t.TempDir(), "p.json")
	pp, esc := startAttached(t, "--save", save, "--funcs", "--func", "^f$", "-p", strconv.Itoa(pid))
	go func() {
		for esc.Scan() {
		}
	}()
	// 50 rounds of 4 bytes, each answered once read: f runs exactly 200
	// times while patchprof is attached.
	for k := 1; k <= 50; k++ {
		if _, err := in.Write([]byte("xyz\n")); err != nil {
			t.Fatal(err)
		}
		if !sc.Scan() || sc.Text() != fmt.Sprintf("got %d", 4*k) {
			t.Fatalf("target answered %q to round %d, want \"got %d\"", sc.Text(), k, 4*k)
		}
	}
	pp.Process.Signal(syscall.SIGINT)
	if err := pp.Wait(); err != nil {
		t.Fatalf("patchprof: %v, want exit 0", err)
	}
	p, err := readProfile(save)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Exit.Detached {
		t.Errorf("profile exit %+v, want detached", p.Exit)
	}
	wantFunc(t, p, "f", 200)
	if after := signalState(t, pid); after != before {
		t.Errorf("signal state changed across attach and detach:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if err := syscall.Kill(pid, syscall.SIGTRAP); err != nil {
		t.Fatal(err)
	}
	in.Close()
	if !sc.Scan() || sc.Text() != "done mismatches 0" {
		t.Errorf("target said %q after the detach, want \"done mismatches 0\"", sc.Text())
	}
	if err := target.Wait(); err != nil {
		t.Errorf("target after the detach and a SIGTRAP: %v", err)
	}
}

// TestLoaderWindowAudit: the dynamic linker's mapping window runs without
// system-call stops (monitor/loader_linux_amd64.go), but not under
// LD_AUDIT, whose library runs there: here it blocks SIGTRAP as each object
// is mapped, and the program must still find it blocked after patchprof's
// breakpoints, under every engine's default pinning. Without a program of
// its own in the window, a plain run keeps its exact counts too.
func TestLoaderWindowAudit(t *testing.T) {
	needs(t)
	audit := buildC(t, "audit/audit.c", "-shared", "-fPIC", "-O0")
	exe := buildC(t, "audit/main.c", "-g", "-O0")
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "LD_AUDIT="+audit)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "SIGTRAP blocked") {
		t.Fatalf("natively with LD_AUDIT: %q, %v (want SIGTRAP blocked)", out, err)
	}
	plain, code := nativeRun(t, exe)
	if code != 0 || !strings.Contains(plain, "SIGTRAP unblocked") {
		t.Fatalf("natively: exit %d, %q", code, plain)
	}
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{{"audit", []string{"LD_AUDIT=" + audit}, string(out)}, {"plain", nil, plain}} {
		for _, flags := range [][]string{{"--funcs"}, {"--lines", "--funcs"}} {
			t.Run(c.name+strings.Join(flags, ""), func(t *testing.T) {
				t.Parallel()
				res, p := runProfile(t, runOpts{args: append(append([]string{}, flags...), exe), env: c.env})
				wantExitCode(t, res, p, 0)
				if res.stdout != c.want {
					t.Errorf("target printed %q under patchprof, %q natively", res.stdout, c.want)
				}
				wantFunc(t, p, "f", 10)
			})
		}
	}
}
