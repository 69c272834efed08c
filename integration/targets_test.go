//go:build linux

package integration

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestTargetsNative builds every target with the flags the other tests use
// and runs it without patchprof: a failure here is in the target or the
// toolchain, not in patchprof.
func TestTargetsNative(t *testing.T) {
	mustHaveCC(t)
	for _, tc := range []struct {
		src    string
		flags  []string
		args   []string
		code   int
		stdout string // exact, or a prefix when it ends in "..."
	}{
		{"shellsort.c", []string{"-g", "-O0", "-pie", "-fpie"}, nil, 0, "checksum 17619044573771334920\n"},
		{"shellsort.c", []string{"-g", "-O0", "-no-pie", "-fno-pie"}, nil, 0, "checksum 17619044573771334920\n"},
		{"shellsort.c", []string{"-g", "-O0", "-static"}, nil, 0, "checksum 17619044573771334920\n"},
		{"calls.c", []string{"-g", "-O0"}, nil, 0, "sum 1499500 fib 610\n"},
		{"calls.c", []string{"-g", "-O2"}, nil, 0, "sum 1499500 fib 610\n"},
		{"calls.c", []string{"-O0"}, nil, 0, "sum 1499500 fib 610\n"},
		{"calls.c", []string{"-O2", "-no-pie", "-fno-pie"}, nil, 0, "sum 1499500 fib 610\n"},
		{"calls.c", []string{"-O0", "-static", "-s"}, nil, 0, "sum 1499500 fib 610\n"},
		{"threads.c", []string{"-g", "-O0", "-pthread"}, nil, 0, "calls 100000\n"},
		{"signals.c", []string{"-g", "-O0"}, []string{"timer"}, 0, "hot ..."},
		{"signals.c", []string{"-g", "-O0"}, []string{"trap"}, 0, "caught SIGTRAP\n"},
		{"signals.c", []string{"-g", "-O0"}, []string{"int3"}, 0, "caught SIGTRAP\n"},
		{"signals.c", []string{"-g", "-O0"}, []string{"trapdie"}, -1, ""},
		{"fork.c", []string{"-g", "-O0"}, nil, 0, "parent done\n"},
		{"vfork.c", []string{"-g", "-O0"}, nil, 0, "hello-from-exec\nparent done\n"},
		{"rep.c", []string{"-O0", "-mno-red-zone"}, nil, 0, "copies 100 trips 70\n"},
		{"rep.c", []string{"-O0", "-mno-red-zone", "-no-pie", "-fno-pie"}, nil, 0, "copies 100 trips 70\n"},
		{"crash.c", []string{"-g", "-O0"}, []string{"segv"}, -1, ""},
		{"crash.c", []string{"-g", "-O0"}, []string{"abort"}, -1, ""},
		{"crash.c", []string{"-g", "-O0"}, []string{"kill"}, -1, ""},
		{"crash.c", []string{"-g", "-O0"}, []string{"fpe"}, -1, ""},
		{"stdin.c", []string{"-g", "-O0"}, []string{"x"}, 7, "argv[0]=[-]\nargv[1]=[x]\nenv=[(unset)]\n..."},
	} {
		exe := buildC(t, tc.src, tc.flags...)
		cmd := exec.Command(exe, tc.args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode() // -1 when killed by a signal
		} else if err != nil {
			t.Errorf("%s %v %v: %v", tc.src, tc.flags, tc.args, err)
			continue
		}
		if code != tc.code {
			t.Errorf("%s %v %v: exit code %d, want %d", tc.src, tc.flags, tc.args, code, tc.code)
		}
		if prefix, ok := strings.CutSuffix(tc.stdout, "..."); ok {
			if !strings.HasPrefix(out.String(), prefix) {
				t.Errorf("%s %v %v: stdout %q, want it to start with %q", tc.src, tc.flags, tc.args, out.String(), prefix)
			}
		} else if out.String() != tc.stdout {
			t.Errorf("%s %v %v: stdout %q, want %q", tc.src, tc.flags, tc.args, out.String(), tc.stdout)
		}
	}
}

// TestGoTargetNative builds and runs the Go target without patchprof.
func TestGoTargetNative(t *testing.T) {
	mustHaveGo(t)
	exe := buildGo(t, "goroutines")
	out, err := exec.Command(exe).Output()
	if err != nil || string(out) != "calls 40000\n" {
		t.Errorf("goroutines: %v, stdout %q, want \"calls 40000\\n\"", err, out)
	}
}

// TestGcovThreads checks that the gcov oracle is exact for threads (with
// atomic counter updates): work's body runs 100000 times.
func TestGcovThreads(t *testing.T) {
	mustHaveGcov(t)
	t.Parallel()
	counts := gcovCounts(t, gcovRun{src: "threads.c", flags: []string{"-pthread"}})
	line := markerLine(t, "threads.c", "WORK_BODY")
	if counts[line] != 100000 {
		t.Errorf("gcov count of threads.c:%d = %d, want 100000", line, counts[line])
	}
}
