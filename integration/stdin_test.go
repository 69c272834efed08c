//go:build linux

package integration

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTransparent checks that the target sees the same world under patchprof
// as without it: stdin, arguments (flag-like ones included: they belong to
// the target), environment and working directory; its stdout is byte for
// byte the same and patchprof exits with its exit code.
func TestTransparent(t *testing.T) {
	needs(t)
	exe := buildC(t, "stdin.c", "-g", "-O0")
	stdin := "hello, patchprof\nsecond line\x00with a NUL\n"
	targetArgs := []string{"a b", "", "--funcs", "-o", "x", "--", "ünïcode"}
	env := []string{"PATCHPROF_TEST_VAR=value with spaces=and equals"}
	for _, tc := range []struct {
		name string
		pre  []string // patchprof's own arguments before the program
	}{
		{"plain", nil},
		{"dashdash", []string{"--"}},
		{"funcs", []string{"--funcs"}},
		{"lines", []string{"--lines", "--funcs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			native := exec.Command(exe, targetArgs...)
			native.Dir = dir
			native.Env = append(os.Environ(), env...)
			native.Stdin = strings.NewReader(stdin)
			var nativeOut bytes.Buffer
			native.Stdout = &nativeOut
			err := native.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 7 {
				t.Fatalf("the target run natively: %v, want exit code 7", err)
			}

			report := filepath.Join(t.TempDir(), "report.txt")
			args := append([]string{"-o", report}, tc.pre...)
			args = append(append(args, exe), targetArgs...)
			res, p := runProfile(t, runOpts{args: args, stdin: stdin, env: env, dir: dir})
			wantExitCode(t, res, p, 7)
			if res.stdout != nativeOut.String() {
				t.Errorf("%s: stdout differs from the native run's\nnative:\n%q\npatchprof:\n%q", res.cmdline, nativeOut.String(), res.stdout)
			}
			if !strings.Contains(res.stdout, "cwd=["+dir+"]") {
				t.Errorf("target's working directory is not %s:\n%s", dir, res.stdout)
			}
			if res.stderr != "" {
				t.Errorf("-o given and the target wrote nothing to stderr, yet stderr is %q", res.stderr)
			}
			// args is argv as given, argv[0] included (docs/profile-format.md).
			if want := append([]string{exe}, targetArgs...); strings.Join(p.Args, "\x00") != strings.Join(want, "\x00") {
				t.Errorf("saved args %q, want %q", p.Args, want)
			}
			header, _, _ := strings.Cut(readFile(t, report), "\n")
			if !regexp.MustCompile(`^patchprof: \S+ exited with code 7` + regexp.QuoteMeta(pinned()) + `$`).MatchString(header) {
				t.Errorf("header %q, want `patchprof: PROG exited with code 7 (run on one CPU: --pin)`", header)
			}
		})
	}
}

// TestRelativeProgram runs a program named by a path relative to the
// working directory; the saved profile names it by its absolute path.
func TestRelativeProgram(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	res, p := runProfile(t, runOpts{args: []string{"--funcs", "./" + filepath.Base(exe)}, dir: filepath.Dir(exe)})
	wantExitCode(t, res, p, 0)
	wantFunc(t, p, "work", 1000)
	if p.Executable != exe {
		t.Errorf("saved executable %q, want the absolute path %q", p.Executable, exe)
	}
	if want := "./" + filepath.Base(exe); len(p.Args) != 1 || p.Args[0] != want {
		t.Errorf("saved args %q, want [%q] (argv as given)", p.Args, want)
	}
}
