//go:build linux

package integration

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Activations left in the middle of a function (tracker issue 24, item 2).
// The in-process engine derives some blocks' counts by flow conservation;
// a frame that never finishes its block (the crash, a Go fault turned into
// a panic, a thread killed mid-loop) or never returns from a call (exit,
// longjmp, an exception, pthread_exit, Goexit) must not make those counts
// differ from what the out-of-line engine counts trap by trap, nor, where
// gcov writes its data (at exit), from gcov's.

// An interruption is one target run that leaves frames behind.
type interruption struct {
	name string
	exe  func(t *testing.T) string
	args []string
	code int      // patchprof's exit status: the target's, or 128+signal
	gcov *gcovRun // the coverage build to compare lines with, nil for none
}

func interruptions() []interruption {
	c := func(t *testing.T) string {
		return buildC(t, "interrupted/interrupted.c", "-g", "-O0", "-pthread")
	}
	cpp := func(t *testing.T) string { return buildC(t, "interrupted/exceptions.cpp", "-g", "-O0") }
	goi := func(t *testing.T) string { return buildGo(t, "gointerrupt") }
	gc := func(mode string) *gcovRun {
		return &gcovRun{src: "interrupted/interrupted.c", flags: []string{"-pthread"}, args: []string{mode}}
	}
	return []interruption{
		{"crash7", func(t *testing.T) string { return buildC(t, "interrupted/crash7.c", "-g", "-O0") }, []string{"a", "b"}, 139, nil},
		{"segv", c, []string{"segv"}, 139, nil},
		{"longjmp", c, []string{"longjmp"}, 0, gc("longjmp")},
		{"exit", c, []string{"exit"}, 3, gc("exit")},
		{"_exit", c, []string{"_exit"}, 4, nil}, // gcov writes nothing at _exit
		{"pthread_exit", c, []string{"pthread_exit"}, 0, gc("pthread_exit")},
		{"cancel", c, []string{"cancel"}, 0, gc("cancel")},
		// gcov derives the counts after a fault as if the block ran on:
		// its line after the fault counts every activation.
		{"siglongjmp", c, []string{"siglongjmp"}, 0, nil},
		{"sigretry", c, []string{"sigretry"}, 0, gc("sigretry")},
		// gcov, as for siglongjmp, runs the loop's block on to its end.
		{"acancel", c, []string{"acancel"}, 0, nil},
		{"exception", cpp, nil, 0, &gcovRun{src: "interrupted/exceptions.cpp"}},
		{"go-panic", goi, []string{"panic"}, 0, nil},
		{"go-nil", goi, []string{"nil"}, 0, nil},
		{"go-crash", goi, []string{"crash"}, 2, nil},
		{"go-goexit", goi, []string{"goexit"}, 0, nil},
	}
}

// TestInterruptedEngines: every line and function count of the jump
// engine equals the xol engine's, and gcov's where gcov has data.
func TestInterruptedEngines(t *testing.T) {
	jumpOnly(t)
	for _, tc := range interruptions() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			exe := tc.exe(t)
			jump := profileUnder(t, "jump", exe, tc.args, tc.code)
			xol := profileUnder(t, "xol", exe, tc.args, tc.code)
			wantJumped(t, jump)
			sameEngineCounts(t, jump, xol, nil)
			if tc.gcov != nil {
				sameAsGcov(t, *tc.gcov, jump)
			}
		})
	}
}

// TestInterruptedCrash7: the line that crashes counts once under the
// jump engine (it was shown as never run).
func TestInterruptedCrash7(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "interrupted/crash7.c", "-g", "-O0")
	p := profileUnder(t, "jump", exe, []string{"a", "b"}, 139)
	wantLine(t, p, "crash7.c", markerLine(t, "interrupted/crash7.c", "CRASH_LINE"), 1)
}

// profileUnder runs exe with args under engine with --lines --funcs and
// returns the profile, checking patchprof's exit status.
func profileUnder(t *testing.T, engine, exe string, args []string, code int) *profile {
	t.Helper()
	res, p := runProfile(t, runOpts{args: append([]string{"--engine=" + engine, "--lines", "--funcs", "-o", filepath.Join(t.TempDir(), "out"), exe}, args...)})
	if res.code != code {
		t.Fatalf("%s: exit status %d, want %d\n%s", res.cmdline, res.code, code, tail(res.stderr))
	}
	return p
}

// sameEngineCounts requires every line and function count of got to equal
// want's, but the lines skip says to leave.
func sameEngineCounts(t *testing.T, got, want *profile, skip func(file string, line int) bool) {
	t.Helper()
	type key struct {
		module, file string
		line         int
	}
	lines := func(p *profile) map[key]int64 {
		m := map[key]int64{}
		for _, l := range p.Lines {
			if skip == nil || !skip(filepath.Base(l.File), l.Line) {
				m[key{l.Module, filepath.Base(l.File), l.Line}] += l.Count
			}
		}
		return m
	}
	funcs := func(p *profile) map[key]int64 {
		m := map[key]int64{}
		for _, f := range p.Functions {
			m[key{module: f.Module, file: f.Name}] += f.Count
		}
		return m
	}
	var bad []string
	diff := func(what string, g, w map[key]int64) {
		for k, n := range w {
			if m, ok := g[k]; !ok || m != n {
				bad = append(bad, fmt.Sprintf("  %s %s:%d%s: jump %d (present %v), xol %d", what, k.file, k.line, k.module, m, ok, n))
			}
		}
		for k, m := range g {
			if _, ok := w[k]; !ok {
				bad = append(bad, fmt.Sprintf("  %s %s:%d%s: jump %d, not in xol's profile", what, k.file, k.line, k.module, m))
			}
		}
	}
	diff("line", lines(got), lines(want))
	diff("function", funcs(got), funcs(want))
	if len(bad) > 0 {
		sort.Strings(bad)
		t.Errorf("%d counts differ between the engines:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}

// sameAsGcov requires the line counts of p, for g.src, to equal gcov's on
// every line both report.
func sameAsGcov(t *testing.T, g gcovRun, p *profile) {
	t.Helper()
	want := gcovCounts(t, g)
	base := filepath.Base(g.src)
	got := linesOf(p, base)
	moveFunctionEntries(want, got, sourceLines(t, g.path(g.src)))
	var bad []string
	both := 0
	for line, n := range want {
		m, ok := got[line]
		if !ok {
			continue
		}
		both++
		if m != n {
			bad = append(bad, fmt.Sprintf("  %s:%d: gcov %d, patchprof %d", base, line, n, m))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		t.Errorf("%d of %d lines differ from gcov:\n%s", len(bad), both, strings.Join(bad, "\n"))
	}
	if 10*both < 9*len(want) {
		t.Errorf("patchprof reports only %d of gcov's %d lines with code in %s", both, len(want), base)
	}
}
