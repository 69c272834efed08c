//go:build linux

package integration

import (
	"debug/elf"
	"encoding/binary"
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

// TestExitStatusPassedThrough: patchprof exits with the target's status,
// 128+N when signal N killed it, even when that status is one patchprof
// uses for its own failures.
func TestExitStatusPassedThrough(t *testing.T) {
	needs(t)
	exe := buildC(t, "exitwith.c", "-g", "-O0")
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 0},
		{[]string{"3"}, 3},
		{[]string{"125"}, 125},
		{[]string{"127"}, 127},
		{[]string{"255"}, 255},
		{[]string{"kill", "9"}, 128 + 9},
		{[]string{"kill", "15"}, 128 + 15},
	} {
		t.Run(strings.Join(append([]string{"status"}, tc.args...), "-"), func(t *testing.T) {
			t.Parallel()
			res := run(t, runOpts{args: append([]string{"--funcs", exe}, tc.args...)})
			if res.code != tc.want {
				t.Errorf("exit code %d, want %d\n%s", res.code, tc.want, res)
			}
			if !strings.HasPrefix(res.stderr, "patchprof: ") || !strings.Contains(res.stderr, "FUNCTION CALLS") {
				t.Errorf("no report:\n%s", res)
			}
		})
	}
}

// TestExitStatusProgram: a program that is not found exits 127, one that
// cannot be run 126, as env(1) does; nothing runs.
func TestExitStatusProgram(t *testing.T) {
	needs(t)
	dir := t.TempDir()
	// An ELF whose interpreter does not exist: execve fails with ENOENT,
	// which shells report as 127.
	noInterp := buildC(t, "exitwith.c", "-g", "-O0", "-Wl,--dynamic-linker=/nonexistent/ld-patchprof.so.2")
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"missing", []string{filepath.Join(dir, "missing")}, exitNotFound},
		{"not-in-path", []string{"no-such-program-patchprof-xyz"}, exitNotFound},
		{"no-interpreter", []string{"--funcs", noInterp}, exitNotFound},
		{"directory", []string{dir}, exitCannotRun},
		{"not-executable", []string{writeFile(t, dir, "noexec", []byte("\x7fELF"), 0o644)}, exitCannotRun},
		{"script-without-shebang", []string{writeFile(t, dir, "text", []byte("echo hi\n"), 0o755)}, exitCannotRun},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, runOpts{args: tc.args, env: []string{"PATH=" + dir}})
			msg := oneLineErrorStatus(t, res, tc.want)
			if tc.name == "no-interpreter" && !strings.Contains(msg, "no such file") {
				t.Errorf("message %q does not say execve's error", msg)
			}
		})
	}
	// The program's own execve: the shell's statuses are the same.
	native := exec.Command(noInterp)
	if err := native.Run(); err == nil || !errors.Is(err, syscall.ENOENT) {
		t.Errorf("running %s natively: %v, want ENOENT (the oracle for 127)", noInterp, err)
	}
}

// unloadable writes a copy of exe whose last PT_LOAD is placed in the
// kernel's half of the address space: execve accepts the file, then cannot
// map it past its point of no return, and the kernel kills the process
// with SIGSEGV before its first instruction.
func unloadable(t *testing.T, exe string) string {
	t.Helper()
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	phoff := le.Uint64(b[32:])
	phentsize, phnum := uint64(le.Uint16(b[54:])), int(le.Uint16(b[56:]))
	last := uint64(0)
	for i := 0; i < phnum; i++ {
		o := phoff + uint64(i)*phentsize
		if elf.ProgType(le.Uint32(b[o:])) == elf.PT_LOAD {
			last = o
		}
	}
	if last == 0 {
		t.Fatalf("%s has no PT_LOAD", exe)
	}
	le.PutUint64(b[last+16:], 0xffff800000000000) // p_vaddr
	le.PutUint64(b[last+24:], 0xffff800000000000) // p_paddr
	return writeFile(t, t.TempDir(), "unloadable", b, 0o755)
}

// TestUnloadableELF: a program the kernel cannot load dies natively with
// SIGSEGV (status 139). Under patchprof it gets the same status and one
// line saying it failed to start, not an error about breakpoints.
func TestUnloadableELF(t *testing.T) {
	needs(t)
	bad := unloadable(t, buildC(t, "exitwith.c", "-g", "-O0", "-static"))
	native := exec.Command(bad)
	native.Run()
	ws, _ := native.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGSEGV {
		t.Fatalf("natively %s ended with %v, want SIGSEGV: the test's oracle is wrong", bad, native.ProcessState)
	}
	res := run(t, runOpts{args: []string{"--funcs", bad}})
	if res.code != 128+int(syscall.SIGSEGV) {
		t.Errorf("exit code %d, want %d\n%s", res.code, 128+int(syscall.SIGSEGV), res)
	}
	want := fmt.Sprintf("patchprof: %s failed to start: the kernel killed it with SIGSEGV before its first instruction", bad)
	if !strings.HasPrefix(res.stderr, want) || strings.Count(res.stderr, "\n") != 1 {
		t.Errorf("stderr %q, want one line starting %q", res.stderr, want)
	}
}

// TestAttachPIDSpelling: -pPID is accepted as strace accepts it, and -p 0
// is a bad process ID, not a missing program.
func TestAttachPIDSpelling(t *testing.T) {
	needs(t)
	_, pid, _, _ := startHeartbeat(t)
	res := run(t, runOpts{args: []string{"--funcs", "--duration", "500ms", "-p" + strconv.Itoa(pid)}})
	if res.code != 0 || !strings.Contains(res.stderr, "detached: it runs on, unharmed") {
		t.Errorf("-p%d: want a detached report and exit 0\n%s", pid, res)
	}
	for _, args := range [][]string{{"-p", "0"}, {"-p0"}} {
		msg := oneLineError(t, run(t, runOpts{args: args}))
		if want := "patchprof: -p 0: -p needs a process ID greater than 0"; msg != want {
			t.Errorf("patchprof %q: %q, want %q", args, msg, want)
		}
	}
}
