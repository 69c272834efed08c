//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestParseGcov checks the gcov parser on text in gcov's format.
func TestParseGcov(t *testing.T) {
	text := `        -:    0:Source:x.c
        -:    0:Graph:x.gcno
        -:    1:#include <stdio.h>
        1:    2:int main(void) {
     1001:    3:	for (int i = 0; i < 1000; i++)
     1000*:    4:		f(i);
    #####:    5:	never();
    =====:    6:	throw();
        1:    7:}
function main called 1 returned 100% blocks executed 80%
`
	got, err := parseGcov(text, "x.c")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int64{2: 1, 3: 1001, 4: 1000, 5: 0, 6: 0, 7: 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parseGcov = %v, want %v", got, want)
	}
}

// TestParseGcovCXX checks the gcov parser on gcov -t's text for C++: the
// headers' sections are skipped, and a template's per-instance repeats
// do not replace its summed counts.
func TestParseGcovCXX(t *testing.T) {
	text := `        -:    0:Source:/usr/include/c++/12/bits/stl_vector.h
        -:    0:Graph:r.gcno
       40:    9:      void f() { g(); }
        -:    0:Source:r.cpp
        -:    0:Graph:r.gcno
        -:    1:template <typename T>
        2:    2:T sum(const std::vector<T> &v)
       42:    3:	for (const T &x : v) s += x;
        -:    4:}
------------------
_Z3sumIdET_RKSt6vectorIS0_SaIS0_EE:
        1:    2:T sum(const std::vector<T> &v)
       21:    3:	for (const T &x : v) s += x;
        -:    4:}
------------------
double sum<double>(std::vector<double, std::allocator<double> > const&):
        1:    2:T sum(const std::vector<T> &v)
    #####:    3:	for (const T &x : v) s += x;
        -:    4:}
------------------
        1:    5:int main()
    #####:    9:	never();
        -:    0:Source:/usr/include/c++/12/new
        7:    5:  return p;
`
	got, err := parseGcov(text, "r.cpp")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int64{2: 2, 3: 42, 5: 1, 9: 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parseGcov = %v, want %v", got, want)
	}
}

// TestGcovOracle checks the oracle itself on real gcov output: shellsort's
// fill loop body runs 1000 times by construction.
func TestGcovOracle(t *testing.T) {
	mustHaveGcov(t)
	t.Parallel()
	counts := gcovCounts(t, gcovRun{src: "shellsort.c"})
	fill := markerLine(t, "shellsort.c", "FILL_BODY")
	if got := counts[fill]; got != 1000 {
		t.Errorf("gcov count of shellsort.c:%d = %d, want 1000 (all counts: %v)", fill, got, counts)
	}
	if len(counts) < 20 {
		t.Errorf("gcov reported only %d lines with code: %v", len(counts), counts)
	}
}

// TestLinesShellsortGcov compares patchprof's line counts of Bishop's
// example with gcov's, for position-dependent, position-independent and
// static executables.
func TestLinesShellsortGcov(t *testing.T) {
	for _, flags := range [][]string{
		{"-g", "-O0", "-pie", "-fpie"},
		{"-g", "-O0", "-no-pie", "-fno-pie"},
		{"-g", "-O0", "-static"},
	} {
		t.Run(strings.Join(flags, ""), func(t *testing.T) {
			t.Parallel()
			p := compareGcov(t, gcovRun{src: "shellsort.c"}, flags)
			wantLine(t, p, "shellsort.c", markerLine(t, "shellsort.c", "FILL_BODY"), 1000)
		})
	}
}

// TestLinesCallsGcov compares the line counts of calls.c (calls, recursion)
// with gcov's.
func TestLinesCallsGcov(t *testing.T) {
	t.Parallel()
	p := compareGcov(t, gcovRun{src: "calls.c"}, []string{"-g", "-O0"})
	wantLine(t, p, "calls.c", markerLine(t, "calls.c", "WORK_BODY"), 1000)
	wantLine(t, p, "calls.c", markerLine(t, "calls.c", "MAIN_CALL_WORK"), 1000)
	wantLine(t, p, "calls.c", markerLine(t, "calls.c", "FIB_TEST"), 1973)
	wantLine(t, p, "calls.c", markerLine(t, "calls.c", "NEVER_BODY"), 0)
}

// TestLinesDefaultMode checks that --lines is the default mode.
func TestLinesDefaultMode(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	res, p := runProfile(t, runOpts{args: []string{exe}})
	wantExitCode(t, res, p, 0)
	if p.Mode != "lines" {
		t.Errorf("mode %q, want \"lines\"", p.Mode)
	}
	wantLine(t, p, "calls.c", markerLine(t, "calls.c", "WORK_BODY"), 1000)
	// The functions' calls are their entry blocks' counts: no function
	// site was planted.
	wantFunc(t, p, "work", 1000)
	wantFunc(t, p, "never", 0)
	for _, s := range p.Sites {
		if strings.Contains(s.Kind, "func") {
			t.Errorf("a --lines run planted a function site: %+v", s)
		}
	}
	if !strings.Contains(res.stdout, "sum 1499500 fib 610") {
		t.Errorf("target's stdout lost: %q", res.stdout)
	}
}

// TestLinesListing checks the annotated listing: the header, every source
// line in order as FILE LINE COUNT: SOURCE, empty counts for lines without
// code and ##### for code that never ran.
func TestLinesListing(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	out := filepath.Join(t.TempDir(), "report.txt")
	res, p := runProfile(t, runOpts{args: []string{"--lines", "-o", out, exe}})
	wantExitCode(t, res, p, 0)
	if strings.Contains(res.stderr, "calls.c") {
		t.Errorf("-o given, but the report went to stderr too:\n%s", tail(res.stderr))
	}
	report := readFile(t, out)
	header, _, _ := strings.Cut(report, "\n")
	// --pin is on by default: the header says so (issue 14).
	if !regexp.MustCompile(`^patchprof: \S+ exited with code 0` + regexp.QuoteMeta(pinned()) + `$`).MatchString(header) {
		t.Errorf("header %q, want `patchprof: PROG exited with code 0 (run on one CPU: --pin)`", header)
	}
	unpinned := filepath.Join(t.TempDir(), "unpinned.txt")
	if res := run(t, runOpts{args: []string{"--lines", "--pin=false", "-o", unpinned, exe}}); res.code != 0 {
		t.Fatalf("%s", res)
	}
	if header, _, _ := strings.Cut(readFile(t, unpinned), "\n"); !regexp.MustCompile(`^patchprof: \S+ exited with code 0$`).MatchString(header) {
		t.Errorf("--pin=false: header %q, want `patchprof: PROG exited with code 0`", header)
	}
	src := filepath.Join(testdataDir, "calls.c")
	text := sourceLines(t, src)
	var mine []listingLine
	for _, l := range parseListing(report) {
		if l.File == src || filepath.Base(l.File) == "calls.c" {
			mine = append(mine, l)
		}
	}
	if len(mine) != len(text) {
		t.Fatalf("listing has %d lines of calls.c, the file has %d; report:\n%s", len(mine), len(text), tail(report))
	}
	for i, l := range mine {
		if l.Line != i+1 {
			t.Fatalf("listing line %d of calls.c is numbered %d", i+1, l.Line)
		}
		if strings.TrimSpace(l.Source) != strings.TrimSpace(text[i]) {
			t.Errorf("calls.c:%d: listing text %q, want %q", l.Line, l.Source, text[i])
		}
	}
	counts := linesOf(p, "calls.c")
	for _, l := range mine {
		n, hasCode := counts[l.Line]
		switch {
		case !hasCode && l.Count != "":
			t.Errorf("calls.c:%d %q: count %q in the listing but no code in the profile", l.Line, l.Source, l.Count)
		case hasCode && n == 0 && l.Count != "#####":
			t.Errorf("calls.c:%d %q: count %q, want ##### (never ran)", l.Line, l.Source, l.Count)
		case hasCode && n > 0 && l.Count != fmt.Sprint(n):
			t.Errorf("calls.c:%d %q: count %q, profile says %d", l.Line, l.Source, l.Count, n)
		}
	}
	check := func(marker, want string) {
		line := markerLine(t, "calls.c", marker)
		if got := mine[line-1].Count; got != want {
			t.Errorf("calls.c:%d (%s): listing count %q, want %q", line, marker, got, want)
		}
	}
	check("WORK_BODY", "1000")
	check("FIB_TEST", "1973")
	check("NEVER_BODY", "#####")
	if mine[0].Count != "" {
		t.Errorf("calls.c:1 is a comment, listing count %q, want empty", mine[0].Count)
	}
	if strings.Contains(report, ">>>") {
		t.Errorf("no crash, but the listing marks a line with >>>")
	}
}

// TestLinesSites checks the raw per-address counts of the saved profile
// under --lines: a function whose flow is recovered is counted at its
// block starts (its line counts derived from them, as gcov derives them),
// any other at its line-table rows; blocks are not reported unless asked
// for with --blocks.
func TestLinesSites(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	res, p := runProfile(t, runOpts{args: []string{"--lines", exe}})
	wantExitCode(t, res, p, 0)
	if len(p.Sites) == 0 {
		t.Fatal("no sites in the saved profile")
	}
	blocks := 0
	for _, s := range p.Sites {
		switch s.Kind {
		case "block":
			blocks++
		case "line":
		default:
			t.Errorf("site %s of kind %q in a --lines profile", s.Address, s.Kind)
		}
	}
	if blocks == 0 {
		t.Errorf("no block sites: the lines of calls.c were not derived from blocks")
	}
	if p.Executable != exe {
		t.Errorf("executable %q, want %q", p.Executable, exe)
	}
}

// TestExecutableUnchanged checks that patchprof leaves the
// executable unchanged on disk (it patches the process, not the file).
func TestExecutableUnchanged(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	before, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	res, p := runProfile(t, runOpts{args: []string{"--lines", "--funcs", exe}})
	wantExitCode(t, res, p, 0)
	after, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Errorf("%s changed on disk", exe)
	}
}

// TestMoveFunctionEntries checks the reconciliation of gcov's and DWARF's
// lines for a function's entry.
func TestMoveFunctionEntries(t *testing.T) {
	src := []string{
		"int",           // 1
		"next(void)",    // 2: gcov counts the entry here
		"{",             // 3: DWARF puts it here
		"\treturn 1;",   // 4
		"}",             // 5
		"int f(void) {", // 6: both on one line
		"\treturn 2;",   // 7
		"}",             // 8
		"static int g(", // 9: gcov counts the entry here
		"  int a",       // 10
		"){",            // 11: DWARF puts it here
		"\treturn a;",   // 12
		"}",             // 13
	}
	want := map[int]int64{2: 5, 4: 5, 6: 1, 7: 1, 9: 3, 12: 3}
	got := map[int]int64{3: 5, 4: 5, 5: 5, 6: 1, 7: 1, 8: 1, 11: 3, 12: 3, 13: 3}
	moves := moveFunctionEntries(want, got, src)
	if fmt.Sprint(moves) != "map[2:3 9:11]" {
		t.Errorf("moves %v, want map[2:3 9:11]", moves)
	}
	if fmt.Sprint(want) != fmt.Sprint(map[int]int64{3: 5, 4: 5, 6: 1, 7: 1, 11: 3, 12: 3}) {
		t.Errorf("want after the move: %v", want)
	}
}
