//go:build linux

package integration

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Issue 24, items 6 to 8: programs that limit what patchprof may do in
// them (a seccomp sandbox, their own GS base, their own code rewritten)
// run as they do natively, their counts exact (the functions are called a
// known number of times), and one note says why they were served by
// breakpoints.

// engineList returns the engines a test runs under: all three, or the
// one the rerun of the package sets (engineEnv).
func engineList() []string {
	if e := os.Getenv(engineEnv); e != "" {
		return []string{e}
	}
	return []string{"jump", "xol", "classic"}
}

// wantOneNote checks that exactly one of p's notes contains s.
func wantOneNote(t *testing.T, cmdline string, notes []string, s string) {
	t.Helper()
	n := 0
	for _, x := range notes {
		if strings.Contains(x, s) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%s: %d notes contain %q, want 1: %q", cmdline, n, s, notes)
	}
}

// TestSandboxLaunch: a program that installs a seccomp filter refusing
// memfd_create and MAP_FIXED_NOREPLACE mmaps (what patchprof would inject)
// by a kill or an error, or enters strict mode, before f's first call,
// before it execs itself, or before it forks (the child inherits the
// filter, and, forklate, what was planted before it): no system call is
// injected where the filter is, the program ends as natively, f and g
// are counted exactly.
func TestSandboxLaunch(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "sandbox.c", "-g", "-O0")
	for _, e := range engineList() {
		for _, c := range []struct {
			action, when, why string
			rounds            int64 // of f 1000 times and g 10
		}{
			{"kill", "now", "a seccomp filter", 1},
			{"errno", "now", "a seccomp filter", 1},
			{"strict", "now", "seccomp strict mode", 1},
			{"kill", "exec", "a seccomp filter", 1},
			{"errno", "exec", "a seccomp filter", 1},
			{"kill", "fork", "a seccomp filter", 2},
			{"errno", "fork", "a seccomp filter", 2},
			{"kill", "forklate", "a seccomp filter", 3},
			{"errno", "forklate", "a seccomp filter", 3},
		} {
			t.Run(e+"/"+c.action+"/"+c.when, func(t *testing.T) {
				want, code := nativeRun(t, exe, c.action, c.when)
				wantOut := map[int64]string{1: "f=1000 g=10\n", 2: "f=1000 g=10\nf=1000 g=10\n", 3: "f=1000 g=10\nf=2000 g=20\nf=2000 g=20\n"}[c.rounds]
				if want != wantOut || code != 0 {
					t.Fatalf("native: %q, status %d", want, code)
				}
				res, p := runProfile(t, runOpts{args: []string{"--engine=" + e, "--funcs", "--func", "^(f|g)$", exe, c.action, c.when}})
				wantExitCode(t, res, p, 0)
				if res.stdout != want {
					t.Errorf("%s: stdout %q, want the native %q", res.cmdline, res.stdout, want)
				}
				wantFunc(t, p, "f", 1000*c.rounds)
				wantFunc(t, p, "g", 10*c.rounds)
				wantOneNote(t, res.cmdline, p.Notes, "the program runs under "+c.why)
				for _, n := range p.Notes {
					if strings.Contains(n, "incomplete") || strings.Contains(n, "no free address range") {
						t.Errorf("%s: note %q", res.cmdline, n)
					}
				}
			})
		}
	}
}

// TestSandboxAttach attaches to a program that installed a filter (or
// entered strict mode) before: patchprof injects nothing, counts exactly
// the calls made while attached, and the program goes on after the
// detach as it would have.
func TestSandboxAttach(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "sandbox.c", "-g", "-O0")
	for _, e := range engineList() {
		for _, action := range []string{"kill", "errno", "strict"} {
			t.Run(e+"/"+action, func(t *testing.T) {
				target, in, sc := startPiped(t, exe, action, "attach")
				if !sc.Scan() || sc.Text() != "ready" {
					t.Fatalf("target did not start: %q", sc.Text())
				}
				notes := attachWindow(t, target.Process.Pid, e, in, sc)
				wantOneNote(t, "attach "+action, notes, "the program runs under")
				in.Close()
				if !sc.Scan() || sc.Text() != "bye 3700 3" {
					t.Errorf("target said %q at its end, want \"bye 3700 3\"", sc.Text())
				}
				if err := target.Wait(); err != nil {
					t.Errorf("target after the detach: %v", err)
				}
			})
		}
	}
}

// attachWindow asks the target (sandbox.c or owngs.c in attach mode) for
// 500 calls of f before patchprof attaches, 3000 while attached and 200
// after the detach; it checks that exactly 3000 calls of f (and 1 of g)
// were counted, and returns the profile's notes.
func attachWindow(t *testing.T, pid int, engine string, in io.Writer, sc *bufio.Scanner) []string {
	t.Helper()
	return attachWindowWith(t, pid, engine, in, sc, func(ask func(string, string)) {
		ask("3000", "done 3000 3500")
	})
}

// attachWindowWith is attachWindow with the dialogue while attached
// given by during, which must make 3000 calls of f (g is called once a
// number).
func attachWindowWith(t *testing.T, pid int, engine string, in io.Writer, sc *bufio.Scanner, during func(ask func(string, string))) []string {
	t.Helper()
	calls := 0 // of g: one a line that is a number
	ask := func(line, want string) {
		t.Helper()
		if _, err := strconv.Atoi(line); err == nil {
			calls++
		}
		fmt.Fprintf(in, "%s\n", line)
		if !sc.Scan() || sc.Text() != want {
			t.Fatalf("target answered %q to %s, want %q (%v)", sc.Text(), line, want, sc.Err())
		}
	}
	ask("500", "done 500 500")
	calls = 0
	save := filepath.Join(t.TempDir(), "p.json")
	pp, esc := startAttached(t, "--engine="+engine, "--save", save, "--funcs", "--func", "^(f|g)$", "-p", strconv.Itoa(pid))
	during(ask)
	pp.Process.Signal(syscall.SIGINT)
	var rest strings.Builder
	for esc.Scan() {
		rest.WriteString(esc.Text() + "\n")
	}
	if err := pp.Wait(); err != nil {
		t.Fatalf("patchprof: %v\n%s", err, rest.String())
	}
	if strings.Contains(rest.String(), "changed") {
		t.Errorf("patchprof left a change in the target:\n%s", rest.String())
	}
	p, err := readProfile(save)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := funcCount(p, "f"); !ok || n != 3000 {
		t.Errorf("f counted %d (%v) while attached, want exactly 3000", n, ok)
	}
	if n, ok := funcCount(p, "g"); !ok || n != int64(calls) {
		t.Errorf("g counted %d (%v) while attached, want exactly %d", n, ok, calls)
	}
	ask("200", "done 200 3700")
	return p.Notes
}

// TestSandboxDetachInSyscall: a program in seccomp strict mode that makes
// system calls without pause (a write, a non-blocking read) is attached to
// and detached from again and again. A detach finds its thread at a system
// call's entry often; the call must then run as the program made it, not
// be skipped (strict mode kills a process for a skipped call's number).
// The program runs on to its end, as natively.
func TestSandboxDetachInSyscall(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "sandbox.c", "-g", "-O0")
	for _, e := range engineList() {
		t.Run(e, func(t *testing.T) { detachBusyStrict(t, exe, e) })
	}
}

// detachBusyStrict attaches engine e to sandbox.c in strict busy mode and
// detaches, 8 times, then ends the program and checks its end.
func detachBusyStrict(t *testing.T, exe, e string) {
	t.Helper()
	target, in, sc := startPiped(t, exe, "strict", "busy")
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("target did not start: %q", sc.Text())
	}
	for cycle := 0; cycle < 8; cycle++ {
		pp, esc := startAttached(t, "--engine="+e, "--funcs", "--func", "^f$", "-p", strconv.Itoa(target.Process.Pid))
		pp.Process.Signal(syscall.SIGINT)
		var rest strings.Builder
		for esc.Scan() {
			rest.WriteString(esc.Text() + "\n")
		}
		if err := pp.Wait(); err != nil {
			t.Fatalf("cycle %d: patchprof: %v\n%s", cycle, err, rest.String())
		}
		if strings.Contains(rest.String(), "changed") {
			t.Errorf("cycle %d: patchprof left a change in the target:\n%s", cycle, rest.String())
		}
	}
	fmt.Fprintf(in, "q")
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "bye ") || !strings.HasSuffix(sc.Text(), " 0") {
		t.Errorf("target said %q at its end, want \"bye F 0\"", sc.Text())
	}
	if err := target.Wait(); err != nil {
		t.Errorf("target after the detaches: %v", err)
	}
}
