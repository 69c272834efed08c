//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAttachQuiet attaches with the in-process engine to a C program that
// blocks and ignores SIGTRAP: every site is patched at the attach, the
// process runs without system-call stops (the note says so), a library it
// loads with dlopen while attached is found through the dynamic linker's
// notification (a gate, no int3) and counted exactly, as in a child it
// forks (whose copy of the gate stops it for patchprof, not for good), the program's
// SIGTRAP state is as it set it throughout, and the detach leaves it as
// it was. With --calls too: the entry checks of an attach never trap
// (breakpoint.Table.SetCallTraps).
func TestAttachQuiet(t *testing.T) {
	for _, flags := range [][]string{{"--funcs"}, {"--funcs", "--calls"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) { attachQuiet(t, flags) })
	}
}

func attachQuiet(t *testing.T, flags []string) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	if e := os.Getenv(engineEnv); e != "" && e != "jump" {
		t.Skipf("the in-process engine's eager attach is what is tested; this is the run under %s=%s", engineEnv, e)
	}
	dir := t.TempDir()
	plug := filepath.Join(dir, "libplug.so")
	if out, err := exec.Command("gcc", "-g", "-O0", "-shared", "-fPIC", "-o", plug, filepath.Join(testdataDir, "solib", "plug.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc libplug.so: %v\n%s", err, out)
	}
	exe := buildC(t, "dlattach.c", "-g", "-O0", "-ldl")
	target, in, sc := startPiped(t, exe, plug)
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("target did not start: %q", sc.Text())
	}
	pid := target.Process.Pid
	codeMaps.Store(pid, execMappings(t, pid))
	sigMaps.Store(pid, dispositions(t, pid))
	ask := func(cmd, want string) {
		t.Helper()
		fmt.Fprintln(in, cmd)
		if !sc.Scan() {
			t.Fatalf("target did not answer %q: %v", cmd, sc.Err())
		}
		if sc.Text() != want {
			t.Fatalf("target answered %q to %q, want %q", sc.Text(), cmd, want)
		}
	}
	ask("300", "done 300 300") // before the attach: not counted

	save := filepath.Join(t.TempDir(), "p.json")
	pp, esc := startAttached(t, append(append([]string{"-v", "--save", save}, flags...), "-p", strconv.Itoa(pid))...)
	ask("2000", "done 2000 2300")
	ask("load", "loaded 9900")
	ask("fork", "forked exited=0") // the child's copy of the gate: its SIGSTOP is ours
	ask("state", "trap blocked=1 ignored=1")
	ask("1000", "done 1000 3300")
	p, rest := detachSaved(t, pp, esc, save)
	if n, ok := funcCount(p, "work"); !ok || n != 3000 {
		t.Errorf("work counted %d (%v) while attached, want exactly 3000", n, ok)
	}
	if n, ok := funcIn(p, "libplug.so", "plug"); !ok || n != 200 {
		t.Errorf("plug (loaded while attached, in the process and in its child) counted %d (%v), want exactly 200\n%s", n, ok, rest)
	}
	wantOneNote(t, "attach", p.Notes, "attached without system-call stops")
	checkDetached(t, pid)
	ask("state", "trap blocked=1 ignored=1")
	ask("load", "loaded 9900")
	ask("10", "done 10 3310")
	in.Close()
	if err := target.Wait(); err != nil {
		t.Errorf("target after the detach: %v", err)
	}
}
