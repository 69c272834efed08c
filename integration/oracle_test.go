//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The gcov oracle: a coverage build of the same source, its counts as
// gcov reports them, and their comparison with patchprof's.

// gcovRun says how to run the coverage build of a target.
type gcovRun struct {
	src    string   // the source gcov reports on: a file in testdata (such as "shapes/loops.c"), or an absolute path; .cpp is C++
	others []string // more sources linked in, named as src (their counts are not read)
	flags  []string // extra gcc flags (e.g. -pthread, -I DIR)
	args   []string // the target's arguments
	stdin  string
}

// path is the absolute path of a source named as gcovRun.src is.
func (g gcovRun) path(src string) string {
	if filepath.IsAbs(src) {
		return src
	}
	return filepath.Join(testdataDir, src)
}

// gcovCounts builds a --coverage -O0 -g copy of g.src in a temporary
// directory (with g++ for C++), runs it, and returns gcov's count for every
// line of g.src with code (0 for "#####").
func gcovCounts(t testing.TB, g gcovRun) map[int]int64 {
	t.Helper()
	dir, base := coverageBuildRun(t, g)
	cmd := exec.Command("gcov", "-t", base)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gcov -t %s: %v\n%s", base, err, stderr.String())
	}
	counts, err := parseGcov(string(out), base)
	if err != nil {
		t.Fatalf("parsing gcov output: %v\n%s", err, tail(string(out)))
	}
	if len(counts) == 0 {
		t.Fatalf("gcov reported no executable lines for %s:\n%s", g.src, tail(string(out)))
	}
	return counts
}

// gcovJSON is gcovCounts through gcov's JSON intermediate format (GCC 9+
// --json-format), which also has each function's execution count and is
// quicker to read for a large source. It returns g.src's entry.
func gcovJSON(t testing.TB, g gcovRun) *gcovJSONFile {
	t.Helper()
	dir, base := coverageBuildRun(t, g)
	cmd := exec.Command("gcov", "--json-format", base)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcov --json-format %s: %v\n%s", base, err, tail(string(out)))
	}
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	f := readGcovJSON(t, filepath.Join(dir, stem+".gcov.json.gz")).file(t, base)
	if len(f.Lines) == 0 {
		t.Fatalf("gcov reported no executable lines for %s", g.src)
	}
	return f
}

// coverageBuildRun copies g.src and g.others into a temporary directory,
// builds them there with --coverage -O0 -g, runs the program, and returns
// the directory (holding the .gcno and .gcda files) and g.src's base name,
// what gcov is given.
func coverageBuildRun(t testing.TB, g gcovRun) (dir, base string) {
	t.Helper()
	mustHaveGcov(t)
	mustHaveCompiler(t, g.src)
	cc := compilerFor(g.src)
	dir = t.TempDir()
	var objs []string
	for _, src := range append([]string{g.src}, g.others...) {
		b, err := os.ReadFile(g.path(src))
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(src)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		// Compile and link separately so the notes file is stem.gcno.
		// Atomic counter updates keep gcov exact for threaded targets.
		// A header the source includes with quotes (beats.h) is found
		// beside the original.
		obj := strings.TrimSuffix(name, filepath.Ext(name)) + ".o"
		args := append([]string{"-c", "--coverage", "-fprofile-update=atomic", "-O0", "-g", "-iquote", filepath.Dir(g.path(src))}, g.flags...)
		gccIn(t, dir, cc, append(args, "-o", obj, name)...)
		objs = append(objs, obj)
	}
	base = filepath.Base(g.src)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	ldArgs := append([]string{"--coverage"}, g.flags...)
	gccIn(t, dir, cc, append(append(ldArgs, "-o", stem), objs...)...)
	cmd := exec.Command(filepath.Join(dir, stem), g.args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(g.stdin)
	var ee *exec.ExitError
	if out, err := cmd.CombinedOutput(); err != nil && !errors.As(err, &ee) {
		t.Fatalf("running the coverage build of %s: %v\n%s", g.src, err, tail(string(out)))
	}
	return dir, base
}

// gccIn runs the compiler cc (gcc, or g++ for C++) with args in dir,
// failing the test with its output.
func gccIn(t testing.TB, dir, cc string, args ...string) {
	t.Helper()
	cmd := exec.Command(cc, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, tail(string(out)))
	}
}

// parseGcov parses gcov's annotated source ("  count:  line:text") of the
// source file whose base name is file: a count, "#####" or "=====" (never
// run), "-" (no code); a "*" after a count marks a line with blocks not
// run. gcov -t prints every source file of the program, each opening with
// "-: 0:Source:NAME" (for C++, the library headers whose inline code was
// compiled in): lines of other files are ignored. For a function with
// several instances (a C++ template, an inline function emitted twice) gcov
// prints the summed count, then each instance's lines again between
// "------------------" rules under a "NAME:" header: those repeats are
// ignored too, as are function and branch summaries.
func parseGcov(text, file string) (map[int]int64, error) {
	counts := make(map[int]int64)
	inFile, inInstances, afterRule := false, false, false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		text := sc.Text()
		if strings.HasPrefix(text, "------------------") {
			afterRule = true
			continue
		}
		m := gcovLineRE.FindStringSubmatch(text)
		if afterRule {
			// The line after a rule is an instance's header (no count
			// field) or, after the last instance, the file's next line.
			inInstances = m == nil
			afterRule = false
		}
		if m == nil || inInstances {
			continue
		}
		line, err := strconv.Atoi(m[2])
		if err != nil {
			return nil, fmt.Errorf("bad line number in %q", text)
		}
		if line == 0 {
			if src, ok := strings.CutPrefix(m[3], "Source:"); ok {
				inFile = filepath.Base(src) == file
			}
			continue
		}
		if !inFile {
			continue
		}
		switch c := strings.TrimSuffix(m[1], "*"); c {
		case "-":
		case "#####", "=====":
			counts[line] = 0
		default:
			n, err := strconv.ParseInt(c, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: bad count %q", file, line, c)
			}
			counts[line] = n
		}
	}
	return counts, sc.Err()
}

// gcovLineRE matches a line of gcov's annotated source: count, line number
// and text.
var gcovLineRE = regexp.MustCompile(`^\s*([-#=\d*]+):\s*(\d+):(.*)$`)

// compareGcov runs src built with buildFlags under `patchprof --lines` and
// requires its line counts to equal gcov's on every line both report, and
// the lines both report to cover at least 90% of gcov's lines with code.
// It returns patchprof's profile.
func compareGcov(t *testing.T, g gcovRun, buildFlags []string) *profile {
	t.Helper()
	needs(t)
	mustHaveGcov(t)
	exe := buildC(t, g.src, buildFlags...)
	args := append([]string{"--lines", exe}, g.args...)
	res, p := runProfile(t, runOpts{args: args, stdin: g.stdin})
	want := gcovCounts(t, g)
	if res.code != 0 {
		t.Errorf("%s: exit code %d, want 0\n%s", res.cmdline, res.code, tail(res.stderr))
	}
	base := filepath.Base(g.src)
	got := linesOf(p, base)
	src := sourceLines(t, filepath.Join(testdataDir, g.src))
	text := func(line int) string {
		if line >= 1 && line <= len(src) {
			return strings.TrimSpace(src[line-1])
		}
		return "?"
	}
	for from, to := range moveFunctionEntries(want, got, src) {
		t.Logf("gcov's count of %s:%d %q (a function's entry) is compared with line %d %q", base, from, text(from), to, text(to))
	}
	var both, gcovOnly, ppOnly []int
	for line := range want {
		if _, ok := got[line]; ok {
			both = append(both, line)
		} else {
			gcovOnly = append(gcovOnly, line)
		}
	}
	for line := range got {
		if _, ok := want[line]; !ok {
			ppOnly = append(ppOnly, line)
		}
	}
	sort.Ints(both)
	sort.Ints(gcovOnly)
	sort.Ints(ppOnly)
	var bad []string
	for _, line := range both {
		if got[line] != want[line] {
			bad = append(bad, fmt.Sprintf("  %s:%d %-50q gcov %d, patchprof %d", base, line, text(line), want[line], got[line]))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%s: %d of %d lines differ from gcov:\n%s", res.cmdline, len(bad), len(both), strings.Join(bad, "\n"))
	}
	for _, line := range gcovOnly {
		t.Logf("only gcov has %s:%d %q (count %d)", base, line, text(line), want[line])
	}
	for _, line := range ppOnly {
		t.Logf("only patchprof has %s:%d %q (count %d)", base, line, text(line), got[line])
	}
	if 10*len(both) < 9*len(want) {
		t.Errorf("%s: patchprof reports only %d of gcov's %d lines with code in %s (want at least 90%%)",
			res.cmdline, len(both), len(want), base)
	}
	return p
}

// moveFunctionEntries reconciles where gcov and DWARF put a function's
// entry: gcov counts it on the line naming the function ("main(void)"),
// gcc's line table on the line of the opening brace below it ("{", or "){"
// closing a parameter list that runs over several lines). A gcov line
// patchprof lacks whose next line with code on either side is such a brace
// line only patchprof has moves there. want is changed in place; the moves are
// returned (from gcov's line to patchprof's).
func moveFunctionEntries(want, got map[int]int64, src []string) map[int]int {
	moves := make(map[int]int)
	for line, n := range want {
		if _, ok := got[line]; ok {
			continue
		}
		next := 0
		for m := line + 1; m <= len(src); m++ {
			_, inGot := got[m]
			_, inWant := want[m]
			if inGot || inWant {
				if inGot && !inWant {
					next = m
				}
				break
			}
		}
		if next == 0 || !isOpeningBrace(src[next-1]) {
			continue
		}
		moves[line] = next
		delete(want, line)
		want[next] = n
	}
	return moves
}

// isOpeningBrace reports whether a source line opens a function body below
// its declarator: "{", or "){" ending a parameter list of several lines.
func isOpeningBrace(line string) bool {
	line = strings.TrimSpace(line)
	return strings.HasPrefix(line, "{") || strings.HasPrefix(line, "){")
}

// Exit statuses of patchprof's own failures (README, "Exit status"), those
// of env(1): patchprof failed, the program cannot be run, not found.
