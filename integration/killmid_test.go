//go:build linux

package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// A thread killed in the middle of a loop (tracker issue 24): the spinner
// of killmid.c counts rounds until main's exit_group kills it, at a point
// no run can predict. The jump engine derives some of the loop's counts by
// flow conservation, which needs where the thread was when it died (the
// monitor reads it at PTRACE_EVENT_EXIT): without it, the loop's first
// line came out one less than the second, in the same block.

// TestInterruptedKilledThread checks what holds by construction, whatever
// the round the spinner died in: the loop head's two lines are one block;
// the if's halves alternate; every round that passed the if reaches the
// line after the join, but perhaps the last. The spinner dies by main's
// exit, or by a SIGTERM sent to it, which kills the process; a signal
// often finds it at a block's first instruction, not begun (the odd and
// even counts came out swapped when that was taken as begun), or at a
// line's first instruction, not begun (that line was counted). Or main
// cancels it asynchronously: the C library's handler unwinds it, and it
// ends there, not in the loop the signal found it in.
func TestInterruptedKilledThread(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	const src = "interrupted/killmid.c"
	exe := buildC(t, src, "-g", "-O0", "-pthread")
	for run := 0; run < 11; run++ {
		mode, status := "exit", 0
		switch {
		case run >= 8:
			mode = "cancel"
		case run >= 3:
			mode, status = "signal", 128+15
		}
		p := profileUnder(t, "jump", exe, []string{mode}, status)
		wantJumped(t, p)
		got := linesOf(p, "killmid.c")
		at := func(marker string) int64 { return got[markerLine(t, src, marker)] }
		i, cond, odd, even, spins, done := at("BODY_I"), at("BODY_IF"), at("BODY_ODD"), at("BODY_EVEN"), at("BODY_SPINS"), at("BODY_DONE")
		t.Logf("run %d (%s): i++ %d, if %d, odd %d, even %d, spins %d, done %d", run, mode, i, cond, odd, even, spins, done)
		if i < 200000 {
			t.Fatalf("the spinner ran %d rounds, want at least 200000 (main waits for them)", i)
		}
		// The loop head's two lines are one block, but a signal (or the
		// exit_group) may find the thread at the if's first instruction,
		// not begun: the last round then ran i++ and not the if. A
		// SIGTERM that did so names the if's line as where it killed.
		ifLine := markerLine(t, src, "BODY_IF")
		if d := i - cond; d != 0 && d != 1 || d == 1 && mode == "signal" && p.Exit.Line != ifLine {
			t.Errorf("the loop head's lines (one block) differ: i++ %d, if %d (killed at line %d)", i, cond, p.Exit.Line)
		}
		if d := odd - even; d < 0 || d > 1 {
			t.Errorf("odd %d, even %d: odd rounds come first, one at most ahead", odd, even)
		}
		if r := odd + even; r != i && r != i-1 || odd != (r+1)/2 {
			t.Errorf("odd %d, even %d, i++ %d: the rounds that passed the if alternate from odd", odd, even, i)
		}
		if s := odd + even; s != cond && s != cond-1 {
			t.Errorf("odd+even %d, if %d: every round but perhaps the last passed the if", s, cond)
		}
		if s := odd + even; spins != s && spins != s-1 {
			t.Errorf("spins %d, odd+even %d: every round but perhaps the last reached the join", spins, odd+even)
		}
		if done != spins && done != spins-1 {
			t.Errorf("done %d, spins %d", done, spins)
		}
	}
}

// TestInterruptedParkedThread: the same loop run exactly 100,000 rounds by
// a thread that then blocks in read(2), where main's exit kills it (main
// waits until it is blocked there),
// in the C library: every count is known, and the jump engine's equal the
// out-of-line engine's (a thread's end outside the program adds nothing).
func TestInterruptedParkedThread(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	const src = "interrupted/killmid.c"
	exe := buildC(t, src, "-g", "-O0", "-pthread")
	jump := profileUnder(t, "jump", exe, []string{"fixed"}, 0)
	xol := profileUnder(t, "xol", exe, []string{"fixed"}, 0)
	wantJumped(t, jump)
	// main polls until the spinner is blocked: those lines run a
	// number of times no run can predict.
	poll := map[int]bool{}
	for i, l := range sourceLines(t, filepath.Join(testdataDir, src)) {
		if strings.Contains(l, "/* POLL */") {
			poll[i+1] = true
		}
	}
	sameEngineCounts(t, jump, xol, func(file string, line int) bool { return file == "killmid.c" && poll[line] })
	for marker, n := range map[string]int64{"BODY_I": 100000, "BODY_IF": 100000, "BODY_ODD": 50000, "BODY_EVEN": 50000, "BODY_SPINS": 100000, "BODY_DONE": 100000} {
		wantLine(t, jump, "killmid.c", markerLine(t, src, marker), n)
	}
}
