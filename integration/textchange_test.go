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

// Programs that change their own code: move it with mremap, rewrite it
// after making it writable with mprotect, unmap a library with dlclose
// while attached. The monitor sees each call at its entry and puts the
// program's own bytes back first (monitor/textchange_linux_amd64.go).
// Each runs under the in-process and the out-of-line engines explicitly.

// textEngines are the engines the tests of this file run under.
var textEngines = []string{"jump", "xol"}

// textOnly skips a test of this file in the reruns of the package under
// another engine: it runs each engine itself.
func textOnly(t *testing.T) {
	t.Helper()
	if e := os.Getenv(engineEnv); e != "" {
		t.Skipf("runs each engine itself: already run outside the %s=%s rerun", engineEnv, e)
	}
	needs(t)
}

// wantTextNote checks that p has exactly one note about the program's
// changes to its code, and that it names what.
func wantTextNote(t *testing.T, p *profile, what string) {
	t.Helper()
	var got []string
	for _, n := range p.Notes {
		if strings.HasPrefix(n, "process ") && strings.Contains(n, " code of ") {
			got = append(got, n)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], what) {
		t.Errorf("notes about the program's code %q, want one saying %q", got, what)
	}
}

// TestTextMove: the program moves the page holding bump with mremap, calls
// it there, and moves it back. Natively it runs; with the moved patches
// it died of SIGSEGV (jump) or SIGTRAP (xol). Now the page's bytes are
// the program's before the move, the moved page is planted where it
// went, and again where it came back: bump's count is exact, 3 x N.
func TestTextMove(t *testing.T) {
	textOnly(t)
	t.Parallel()
	exe := buildC(t, "textmove.c", "-g", "-O0")
	const n = 1000
	want, _ := nativeRun(t, exe, strconv.Itoa(n))
	for _, e := range textEngines {
		res, p := runProfile(t, runOpts{args: []string{"--engine=" + e, "--funcs", "--lines", exe, strconv.Itoa(n)}})
		wantExitCode(t, res, p, 0)
		if res.stdout != want {
			t.Errorf("--engine=%s: stdout %q, natively %q", e, res.stdout, want)
		}
		wantFunc(t, p, "bump", 3*n)
		wantFunc(t, p, "main", 1)
		wantLine(t, p, "textmove.c", markerLine(t, "textmove.c", "BUMP_BODY"), 3*n)
		// The loop calling the moved copy counts as the loop before it.
		first, _ := lineCount(p, "textmove.c", markerLine(t, "textmove.c", "FIRST_CALLS"))
		wantLine(t, p, "textmove.c", markerLine(t, "textmove.c", "MOVED_CALLS"), first)
		wantTextNote(t, p, "(mremap)")
	}
}

// TestTextWrite: the program makes scale's page writable, finds the
// constant in scale's body and rewrites it, then calls scale again.
// Under the jump patch it read the patch, found nothing and computed
// the old sums. Now the patches of the page become int3s at the mprotect
// (the constant is at no site's first byte): the output is native and
// scale's count exact, 2 x N.
func TestTextWrite(t *testing.T) {
	textOnly(t)
	t.Parallel()
	exe := buildC(t, "textwrite.c", "-g", "-O0")
	const n = 1000
	want, _ := nativeRun(t, exe, strconv.Itoa(n))
	if !strings.Contains(want, "rewrote 1\n") {
		t.Fatalf("natively the program did not rewrite its code: %q", want)
	}
	for _, e := range textEngines {
		res, p := runProfile(t, runOpts{args: []string{"--engine=" + e, "--funcs", "--lines", exe, strconv.Itoa(n)}})
		wantExitCode(t, res, p, 0)
		if res.stdout != want {
			t.Errorf("--engine=%s: stdout %q, natively %q", e, res.stdout, want)
		}
		wantFunc(t, p, "scale", 2*n)
		wantFunc(t, p, "main", 1)
		wantLine(t, p, "textwrite.c", markerLine(t, "textwrite.c", "SCALE_BODY"), 2*n)
		wantTextNote(t, p, "writable (mprotect)")
	}
}

// TestTextDlclose: a running program dlopens a library, calls it and
// dlcloses it, twice, while patchprof is attached; patchprof detaches and
// the program does it once more. plug's count is exact over both loads,
// the program's output is native, no note is made (a library unmapped
// whole is the ordinary case), and the detach leaves the executable
// mappings as they were: the trampolines and scratch regions of the
// unloaded library are unmapped at its munmap (they were left behind).
func TestTextDlclose(t *testing.T) {
	textOnly(t)
	t.Parallel()
	dir := t.TempDir()
	lib := filepath.Join(dir, "libplug.so")
	gccIn(t, dir, "gcc", "-g", "-O0", "-shared", "-fPIC", "-o", lib, filepath.Join(testdataDir, "solib", "plug.c"))
	exe := buildC(t, "textplug.c", "-g", "-O0", "-ldl")
	const n = 1000
	line := fmt.Sprintf("plug %d sum %d", n, n*(n-1))
	for _, e := range textEngines {
		cmd, in, sc := startPiped(t, exe, lib, strconv.Itoa(n))
		if !sc.Scan() || !strings.HasPrefix(sc.Text(), "ready ") {
			t.Fatalf("target did not start: %q", sc.Text())
		}
		pid := cmd.Process.Pid
		before := execMappings(t, pid)
		save := filepath.Join(t.TempDir(), "p.json")
		pp, esc := startAttached(t, "--engine="+e, "--funcs", "--lines", "--save", save, "-p", strconv.Itoa(pid))
		cycles(t, in, sc, line, 2)
		if err := pp.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		var rest strings.Builder
		for esc.Scan() {
			rest.WriteString(esc.Text() + "\n")
		}
		if err := pp.Wait(); err != nil {
			t.Fatalf("--engine=%s: patchprof: %v\n%s", e, err, rest.String())
		}
		p, err := readProfile(save)
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := funcIn(p, "libplug.so", "plug"); !ok || n != 2*1000 {
			t.Errorf("--engine=%s: plug counted %d (%v), want %d", e, n, ok, 2*1000)
		}
		for _, note := range p.Notes {
			if strings.Contains(note, " code of ") {
				t.Errorf("--engine=%s: a note about dlclose: %q", e, note)
			}
		}
		if after := execMappings(t, pid); after != before {
			t.Errorf("--engine=%s: the executable mappings changed across attach and detach:\nbefore:\n%s\nafter:\n%s", e, before, after)
		}
		cycles(t, in, sc, line, 1)
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("--engine=%s: target after the detach: %v", e, err)
		}
	}
}

// cycles asks textplug for k load-call-unload cycles and checks what it
// prints for each.
func cycles(t *testing.T, in io.Writer, sc *bufio.Scanner, line string, k int) {
	t.Helper()
	for ; k > 0; k-- {
		if _, err := io.WriteString(in, "cycle\n"); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{line, "closed"} {
			if !sc.Scan() || sc.Text() != want {
				t.Fatalf("textplug printed %q, want %q", sc.Text(), want)
			}
		}
	}
}
