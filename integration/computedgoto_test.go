//go:build linux

package integration

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cgoto.c is an interpreter dispatched by GNU C computed goto (goto
// *disp[op]) and a state machine jumping through a label address in a
// variable (goto *next). Their functions once had no flow graph: their
// lines were counted at rows, each label without gcov's count, and every
// hit trapped under the in-process engine.

// cgotoMarkers are the counts of cgoto.c's marked lines by construction:
// run sums 1..10 three times (11 pushes, 10 adds, 19 swaps and jnz, one
// drop falling into nop, one nop, a run), resume(7) alternates.
var cgotoMarkers = map[string]int64{
	"PUSH_BODY": 33, "ADD_BODY": 30, "OVER_BODY": 30, "COUNT_BODY": 30,
	"JNZ_TEST": 57, "JNZ_TAKEN": 54, "JNZ_NOT": 3, "NOP_BODY": 6,
	"EVEN_BODY": 4, "ODD_BODY": 3,
}

// TestComputedGotoGcov compares every line count of cgoto.c, built -g -O0
// as a PIE and as a position-dependent executable, with gcov's, exactly
// (a line only one of them counts is a difference too), and checks that
// both functions were counted by blocks and, under the in-process engine,
// in the target: about one trap per site.
func TestComputedGotoGcov(t *testing.T) {
	needs(t)
	mustHaveGcov(t)
	t.Parallel()
	path := filepath.Join(testdataDir, "cgoto.c")
	want := gcovCounts(t, gcovRun{src: "cgoto.c"})
	text := sourceText(t, path)
	for m, n := range cgotoMarkers {
		if l := markerLine(t, "cgoto.c", m); want[l] != n {
			t.Errorf("the oracle disagrees with the source: gcov counts cgoto.c:%d (%s) %d, by construction %d", l, m, want[l], n)
		}
	}
	for _, flags := range [][]string{
		{"-g", "-O0"},
		{"-g", "-O0", "-no-pie", "-fno-pie"},
	} {
		t.Run(strings.Join(flags, ""), func(t *testing.T) {
			exe := buildC(t, "cgoto.c", flags...)
			res, p := runProfile(t, runOpts{args: []string{"--lines", "--funcs", exe}})
			wantExitCode(t, res, p, 0)
			got := linesOf(p, "cgoto.c")
			want := maps.Clone(want)
			moveFunctionEntries(want, got, sourceLines(t, path))
			diffs, all := lineDiffs(want, got)
			var bad []string
			for _, d := range diffs {
				bad = append(bad, fmt.Sprintf("  cgoto.c:%d %-45q gcov %s, patchprof %s", d.line, text(d.line), d.want, d.got))
			}
			if len(bad) > 0 {
				t.Errorf("%s: %d of %d lines differ from gcov (\"-\": no count):\n%s", res.cmdline, len(bad), all, strings.Join(bad, "\n"))
			}
			for m, n := range cgotoMarkers {
				wantLine(t, p, "cgoto.c", markerLine(t, "cgoto.c", m), n)
			}
			wantFunc(t, p, "run", 3)
			wantFunc(t, p, "resume", 1)
			wantGraphs(t, res, p, "run", "resume")
			if e := os.Getenv(engineEnv); e == "" || e == "jump" {
				wantJumped(t, p)
				wantFewTraps(t, res, p, 10)
			}
		})
	}
}

// TestComputedGotoO2 runs cgoto.c built -O2 -no-pie, where gcc gives
// every goto its own indirect jump and keeps label addresses in
// registers: both functions still have a flow graph, and count their
// calls. (Its lines are not gcov's -O0 lines; its edges do not all follow
// from block counts, so the in-process engine keeps breakpoints.)
func TestComputedGotoO2(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "cgoto.c", "-g", "-O2", "-no-pie", "-fno-pie")
	res, p := runProfile(t, runOpts{args: []string{"--lines", "--funcs", exe}})
	wantExitCode(t, res, p, 0)
	if !strings.Contains(res.stdout, "run 165 resume 4003") {
		t.Errorf("%s: the target's output is %q", res.cmdline, res.stdout)
	}
	wantFunc(t, p, "run", 3)
	wantFunc(t, p, "resume", 1)
	wantGraphs(t, res, p, "run", "resume")
}

// wantGraphs checks that no note of p says a function of names has no
// block counts (no flow graph).
func wantGraphs(t *testing.T, res result, p *profile, names ...string) {
	t.Helper()
	for _, n := range p.Notes {
		for _, name := range names {
			if strings.HasPrefix(n, "no block counts for "+name+":") {
				t.Errorf("%s: %q", res.cmdline, n)
			}
		}
	}
}
