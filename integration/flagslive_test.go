//go:build linux

package integration

import (
	"fmt"
	"strings"
	"testing"
)

// Sites where the arithmetic flags are live once kept their int3 under the
// in-process engine, since the trampoline's addq writes the flags: zlib's
// minigzip trapped 317,249 times at 23 such sites (a variable shift's
// flags are not known dead), 22 s instead of a fraction of one. They now
// count with an update that writes no flag (breakpoint/jump/keepflags.go).

// noFlagsLive checks that no site of the run kept its breakpoint because
// the flags are live at it.
func noFlagsLive(t *testing.T, res result, p *profile) {
	t.Helper()
	for _, n := range p.Notes {
		if strings.Contains(n, "flags are live") {
			t.Errorf("%s: %q", res.cmdline, n)
		}
	}
}

// TestFlagsLiveGcov: flagslive.c's hot sites where the flags are live
// count in the target: the line counts equal gcov's, the program's own
// check of the flags its assembly reads finds nothing wrong (a plain add
// there answered wrong 25,713 times in 100,000), no site keeps its
// breakpoint for the flags, and the run traps only at first hits.
func TestFlagsLiveGcov(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	g := gcovRun{src: "flagslive.c", args: []string{"300000"}}
	p := compareGcov(t, g, []string{"-g", "-O0"})
	noFlagsLive(t, result{cmdline: "patchprof --lines flagslive 300000"}, p)
	exe := buildC(t, "flagslive.c", "-g", "-O0")
	res, p := runProfile(t, runOpts{args: []string{"--engine=jump", "--lines", "--funcs", "-v", exe, "300000"}})
	wantExitCode(t, res, p, 0)
	if res.stdout != "n 300000 handled 0 bad 0\n" {
		t.Errorf("%s: stdout %q", res.cmdline, res.stdout)
	}
	if !strings.Contains(res.stderr, "note: in-process engine: ") {
		t.Errorf("%s: no engine note under -v:\n%s", res.cmdline, tail(res.stderr))
	}
	for _, f := range []string{"below", "rot", "shifted"} {
		wantFunc(t, p, f, 300000)
	}
	wantLine(t, p, "flagslive.c", markerLine(t, "flagslive.c", "BELOW_ASM"), 300000)
	noFlagsLive(t, res, p)
	wantFewTraps(t, res, p, 10)
}

// TestFlagsLiveSignals: a timer signal every 200 microseconds while the
// loop runs through updates that keep the flags: a thread a signal finds
// inside one is put back at its site, its stack pointer and %rax as they
// were, before the handler runs (leaving it where it was killed the
// program). The counts equal the program's own, the handler's calls of
// rot included.
func TestFlagsLiveSignals(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "flagslive.c", "-g", "-O0")
	const n = 1000000
	res, p := runProfile(t, runOpts{args: []string{"--engine=jump", "--lines", "--funcs", exe, fmt.Sprint(n), "signals"}})
	wantExitCode(t, res, p, 0)
	var got, handled, bad int64
	if _, err := fmt.Sscanf(res.stdout, "n %d handled %d bad %d", &got, &handled, &bad); err != nil || got != n || bad != 0 {
		t.Fatalf("%s: target's stdout %q", res.cmdline, res.stdout)
	}
	if handled == 0 {
		t.Errorf("%s: no timer signal arrived", res.cmdline)
	}
	wantFunc(t, p, "below", n)
	wantFunc(t, p, "shifted", n)
	wantFunc(t, p, "rot", n+handled)
	wantFunc(t, p, "on_alarm", handled)
	wantLine(t, p, "flagslive.c", markerLine(t, "flagslive.c", "ROT_BODY"), n+handled)
	noFlagsLive(t, res, p)
}
