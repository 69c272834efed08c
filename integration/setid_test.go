//go:build linux

package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nobody is the user and group ID the unprivileged runs use.
const nobody = 65534

// publicDir is a new directory every user may read and search (the build
// directories are private), removed when the test ends.
func publicDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "patchprof-public-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runAsNobody runs the command args as user and group nobody, without
// capabilities (setpriv). It skips the test when setpriv is missing or
// patchprof does not run as root (only root may change its user ID).
func runAsNobody(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed: cannot run as another user")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot run as user nobody (65534)")
	}
	id := fmt.Sprint(nobody)
	cmd := exec.Command(setpriv, append([]string{"--reuid=" + id, "--regid=" + id, "--clear-groups"}, args...)...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if ee := (*exec.ExitError)(nil); err != nil && !errors.As(err, &ee) {
		t.Fatalf("setpriv %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// TestSetIDNotHonoured: execve ignores the set-user-ID and set-group-ID
// bits of a program started under ptrace by a tracer without
// CAP_SYS_PTRACE: the program runs with the user's IDs. patchprof says so
// before it starts the program and as the first note of the report. Run
// by root (who has CAP_SYS_PTRACE), the bit is honoured and nothing is
// said.
func TestSetIDNotHonoured(t *testing.T) {
	needs(t)
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot give a program to another user, nor run as nobody (65534)")
	}
	dir := publicDir(t)
	pp := copyExecutable(t, patchprofBin, filepath.Join(dir, "patchprof"))
	who := copyExecutable(t, buildC(t, "whoami.c", "-g", "-O0"), filepath.Join(dir, "whoami"))
	for _, tc := range []struct {
		mode   os.FileMode
		native string // what whoami prints, run natively by nobody (owner and group root)
		traced string // what it prints under patchprof, run by nobody
		note   string
	}{
		{os.ModeSetuid, "euid 0 egid 65534\n", "euid 65534 egid 65534\n",
			"set-user-ID bit of " + who + " is not honoured under tracing: it runs as uid 65534"},
		{os.ModeSetgid, "euid 65534 egid 0\n", "euid 65534 egid 65534\n",
			"set-group-ID bit of " + who + " is not honoured under tracing: it runs as gid 65534"},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			if err := os.Chown(who, 0, 0); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(who, 0o755|tc.mode); err != nil {
				t.Fatal(err)
			}
			if out, _, _ := runAsNobody(t, who); out != tc.native {
				t.Skipf("natively whoami printed %q, want %q: set-ID bits are not honoured here (a nosuid mount?)", out, tc.native)
			}
			out, errOut, code := runAsNobody(t, pp, "--funcs", who)
			if code != 0 || out != tc.traced {
				t.Fatalf("under patchprof as nobody: exit %d, stdout %q; want 0 and %q\nstderr:\n%s", code, out, tc.traced, errOut)
			}
			lines := strings.Split(errOut, "\n")
			if lines[0] != "patchprof: "+tc.note {
				t.Errorf("first line %q, want %q", lines[0], "patchprof: "+tc.note)
			}
			if i := strings.Index(errOut, "\nnote: "); i < 0 || !strings.HasPrefix(errOut[i+1:], "note: "+tc.note+"\n") {
				t.Errorf("the first note is not %q:\n%s", tc.note, errOut)
			}
		})
	}
	// Root: the bit is honoured (the program runs as nobody, the file's
	// owner), so nothing is said.
	if err := os.Chown(who, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(who, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	res := run(t, runOpts{args: []string{"--funcs", who}})
	if res.code != 0 || res.stdout != "euid 65534 egid 0\n" || strings.Contains(res.stderr, "not honoured") {
		t.Errorf("as root, setuid nobody: want it honoured, no note\n%s", res)
	}
}
