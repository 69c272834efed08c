//go:build linux

package integration

import (
	"fmt"
	"strings"
	"testing"
)

// hotCalls are the calls of hotexec's functions in one process, by
// construction: five runs three on four(i) = 3i+1 for i < 1000, odd for
// the 500 even i (two, which calls one), even for the others (one).
var hotCalls = map[string]int64{"main": 1, "five": 1, "six": 1, "four": 1000, "three": 1000, "two": 500, "one": 1000}

// TestHotAhead: a program run again and again (hotexec 9: ten processes
// of one program, each a child of the one before) traps at its functions'
// first hits in the first process only; each later one patches them all
// at its own first hit. Every process runs the same functions, so each
// function patched ahead is one trap less, exactly: the traps and the
// functions patched ahead add up to ten times one process's traps. The
// counts are the sum of ten processes' and classic's.
func TestHotAhead(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "hotexec.c", "-g", "-O0")
	args := func(e string, k int) []string {
		return []string{"-v", "--engine=" + e, "--lines", "--funcs", exe, fmt.Sprint(k)}
	}
	res, one := runProfile(t, runOpts{args: args("jump", 0)})
	wantExitCode(t, res, one, 0)
	traps1, ahead1 := trapsAhead(t, one)
	if ahead1 != 0 {
		t.Errorf("%s: %d functions patched ahead in one process, want 0", res.cmdline, ahead1)
	}
	var want strings.Builder
	for k := 9; k >= 0; k-- {
		fmt.Fprintf(&want, "hotexec %d 1508344\n", k)
	}
	var profs []*profile
	for _, e := range []string{"jump", "classic"} {
		res, p := runProfile(t, runOpts{args: args(e, 9)})
		wantExitCode(t, res, p, 0)
		if res.stdout != want.String() {
			t.Errorf("%s: stdout %q, want the native %q", res.cmdline, res.stdout, want.String())
		}
		for name, n := range hotCalls {
			wantFunc(t, p, name, 10*n)
		}
		if e == "jump" {
			traps, ahead := trapsAhead(t, p)
			if traps+ahead != 10*traps1 {
				t.Errorf("%s: %d traps and %d functions patched ahead, want %d in all (one process traps %d times)", res.cmdline, traps, ahead, 10*traps1, traps1)
			}
			if ahead < 9*len(hotCalls) {
				t.Errorf("%s: %d functions patched ahead, want at least %d (main and its callees in the nine later processes); notes %q", res.cmdline, ahead, 9*len(hotCalls), p.Notes)
			}
			// The second process keeps its trampolines, the eight after
			// it move them, at least one a function of hotCalls each,
			// and count as exactly (above, and against the classic
			// engine below).
			if moved := movedTrampolines(p); moved < 8*len(hotCalls) {
				t.Errorf("%s: %d trampolines moved from an earlier process, want at least %d; notes %q", res.cmdline, moved, 8*len(hotCalls), p.Notes)
			}
		}
		profs = append(profs, p)
	}
	sameEngineCounts(t, profs[0], profs[1], nil)
}

// trapsAhead returns the traps of an in-process engine's run and the
// functions it patched ahead, from its notes.
func trapsAhead(t *testing.T, p *profile) (traps, ahead int) {
	t.Helper()
	found := false
	for _, n := range p.Notes {
		var planned, patched int
		if _, err := fmt.Sscanf(n, "in-process engine: %d sites can count in the target, %d were patched", &planned, &patched); err == nil {
			i := strings.LastIndex(n, "(")
			if _, err := fmt.Sscanf(n[i:], "(%d traps in all)", &traps); err != nil {
				t.Fatalf("no trap count in %q", n)
			}
			found = true
		}
		var a int
		if _, err := fmt.Sscanf(n, "in-process engine: %d functions were patched ahead", &a); err == nil {
			ahead = a
		}
	}
	if !found {
		t.Fatalf("no note of the in-process engine in %q", p.Notes)
	}
	return traps, ahead
}

// movedTrampolines returns how many trampolines an in-process engine's
// run moved from an earlier process of their program, from its notes.
func movedTrampolines(p *profile) int {
	for _, n := range p.Notes {
		var k int
		if _, err := fmt.Sscanf(n, "in-process engine: %d trampolines were moved", &k); err == nil {
			return k
		}
	}
	return 0
}
