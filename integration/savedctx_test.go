//go:build linux

package integration

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Saved contexts inside a patch (tracker issue 24, item 3;
// docs/design.md, "Saved contexts inside a patch"): threads parked in a
// signal handler, coroutines switched away with swapcontext, and a thread
// blocked in a system call of a function's first block, each inside a
// function another thread then calls (the jump engine patches it at that
// first hit). savedctx.c prints its own counters; each function is called
// a known number of times.

// TestSavedContexts runs each mode natively and under patchprof: the same
// output and exit status, and every function counted as often as it was
// called.
func TestSavedContexts(t *testing.T) {
	mustHaveCC(t)
	exe := buildC(t, "savedctx.c", "-g", "-O0", "-pthread")
	for _, tc := range []struct {
		mode  string
		funcs map[string]int64
	}{
		{"handler", map[string]int64{"spin": 5, "spinner": 4, "onusr1": 4}},
		{"coro", map[string]int64{"park": 5, "coro": 4}},
		{"first", map[string]int64{"gate": 2, "gatekeeper": 1}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			native := exec.Command(exe, tc.mode)
			native.Stdin = strings.NewReader("go\n")
			want, err := native.Output()
			if err != nil {
				t.Fatalf("native %s: %v", tc.mode, err)
			}
			res, p := runProfile(t, runOpts{args: []string{"--funcs", exe, tc.mode}, stdin: "go\n"})
			if res.code != 0 {
				t.Fatalf("exit status %d, natively 0\n%s", res.code, res)
			}
			if sortedLines(res.stdout) != sortedLines(string(want)) {
				t.Errorf("output differs from the native run's:\n%s\nnatively:\n%s", res.stdout, want)
			}
			for name, n := range tc.funcs {
				if got, _ := funcCount(p, name); got != n {
					t.Errorf("%s counted %d times, called %d", name, got, n)
				}
			}
		})
	}
}

// TestSavedContextsAttach attaches to each mode running natively, its
// contexts already parked, once it says ready: inside spin, park and gate
// before patchprof plants anything. Then main makes the first call, and
// either the target runs to its end under patchprof, or (hold) patchprof
// detaches while the contexts are still parked inside the patched
// function, and they resume only after the detach. Either way the target's
// output and exit status are a native run's, and the profile counts
// exactly the calls made while attached: main's one call, none of the
// parked contexts' (they entered before the attach).
func TestSavedContextsAttach(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	exe := buildC(t, "savedctx.c", "-g", "-O0", "-pthread")
	for _, tc := range []struct {
		mode  string
		funcs map[string]int64 // the calls made while attached
	}{
		{"handler", map[string]int64{"spin": 1, "spinner": 0, "onusr1": 0}},
		{"coro", map[string]int64{"park": 1, "coro": 0}},
		{"first", map[string]int64{"gate": 1, "gatekeeper": 0}},
	} {
		for _, hold := range []bool{false, true} {
			name := tc.mode + "/to-end"
			if hold {
				name = tc.mode + "/detach"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				args, feed := []string{tc.mode}, "go\n"
				if hold {
					args, feed = append(args, "hold"), "go\ngo\n"
				}
				native := exec.Command(exe, args...)
				native.Stdin = strings.NewReader(feed)
				want, err := native.Output()
				if err != nil {
					t.Fatalf("native %q: %v", args, err)
				}

				target, in, sc := startPiped(t, exe, args...)
				out := readLines(sc)
				var got []string
				next := func(want string) {
					t.Helper()
					for {
						l, ok := out.line(t)
						if !ok {
							t.Fatalf("target ended before it printed %q: %v\n%s", want, target.Wait(), strings.Join(got, "\n"))
						}
						got = append(got, l)
						if l == want {
							return
						}
					}
				}
				next("ready")
				save := filepath.Join(t.TempDir(), "p.json")
				pp, esc := startAttached(t, "--funcs", "--save", save, "-p", strconv.Itoa(target.Process.Pid))
				report := drainStderr(esc)
				fmt.Fprintln(in, "go")
				if hold {
					// held comes after main's call: its count is in.
					next("held")
					pp.Process.Signal(syscall.SIGINT)
				}
				code, rest := waitPatchprof(t, pp, report)
				if code != 0 {
					t.Fatalf("patchprof exit %d, want 0\n%s", code, rest)
				}
				p, err := readProfile(save)
				if err != nil {
					t.Fatal(err)
				}
				if hold && (!p.Exit.Detached || !strings.Contains(rest, "detached")) {
					t.Errorf("profile exit %+v, want detached\n%s", p.Exit, rest)
				}
				if !hold && (p.Exit.Code == nil || *p.Exit.Code != 0) {
					t.Errorf("profile exit %+v, want code 0\n%s", p.Exit, rest)
				}
				if hold {
					fmt.Fprintln(in, "go")
				}
				in.Close()
				for {
					l, ok := out.line(t)
					if !ok {
						break
					}
					got = append(got, l)
				}
				target.Wait()
				if c, n := target.ProcessState.ExitCode(), native.ProcessState.ExitCode(); c != n {
					t.Errorf("target exit status %d, natively %d", c, n)
				}
				if s := strings.Join(got, "\n"); sortedLines(s) != sortedLines(string(want)) {
					t.Errorf("output differs from the native run's:\n%s\nnatively:\n%s", s, want)
				}
				for name, n := range tc.funcs {
					if c, _ := funcCount(p, name); c != n {
						t.Errorf("%s counted %d times while attached, called %d", name, c, n)
					}
				}
			})
		}
	}
}

// outLines is a target's output, line by line, read as it comes.
type outLines chan string

// readLines reads sc's lines into an outLines, closed at sc's end.
func readLines(sc *bufio.Scanner) outLines {
	c := make(outLines, 64)
	go func() {
		for sc.Scan() {
			c <- sc.Text()
		}
		close(c)
	}()
	return c
}

// line returns the next line; ok is false at the end of the output.
func (c outLines) line(t *testing.T) (s string, ok bool) {
	t.Helper()
	select {
	case s, ok = <-c:
		return s, ok
	case <-time.After(eventBound):
		t.Fatalf("no line from the target in %v", eventBound)
	}
	return "", false
}

// drainStderr reads the rest of patchprof's stderr, so that writing its report
// never waits on the pipe; the channel gives it at patchprof's end.
func drainStderr(sc *bufio.Scanner) <-chan string {
	c := make(chan string, 1)
	go func() {
		var b strings.Builder
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		c <- b.String()
	}()
	return c
}

// waitPatchprof waits for patchprof's end and returns its exit code and
// the rest of its stderr.
func waitPatchprof(t *testing.T, pp *exec.Cmd, report <-chan string) (int, string) {
	t.Helper()
	var rest string
	select {
	case rest = <-report:
	case <-time.After(eventBound):
		t.Fatalf("patchprof still running after %v", eventBound)
	}
	pp.Wait()
	return pp.ProcessState.ExitCode(), rest
}

// sortedLines returns s's lines in order: threads print in any order.
func sortedLines(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j] < l[j-1]; j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
	return strings.Join(l, "\n")
}
