//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sqliteModule is the Go module whose sqlite3-binding.c and
// sqlite3-binding.h are the SQLite amalgamation (3.45.1 in v1.14.22), both
// wrapped in #ifndef USE_LIBSQLITE3. The test fetches it through the Go
// module proxy at test time, so the 9 MB source stays out of the repository
// and out of patchprof's go.mod.
const sqliteModule = "github.com/mattn/go-sqlite3@v1.14.22"

// sqliteAmalgamation returns the directory holding sqlite3-binding.c and
// sqlite3-binding.h: the module cache's copy of sqliteModule, downloaded if
// it is not there yet. It skips the test only when the module proxy cannot
// be reached; CI reaches it (.ci/run's own go mod download needs it too).
func sqliteAmalgamation(t testing.TB) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", sqliteModule)
	// Outside any module, so patchprof's go.mod is neither read nor changed.
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil && runErr == nil {
		t.Fatalf("go mod download -json %s: %v\n%s", sqliteModule, err, tail(string(out)))
	}
	if runErr != nil || mod.Error != "" {
		msg := strings.TrimSpace(mod.Error + "\n" + stderr.String())
		if unreachableProxy(msg) {
			t.Skipf("the Go module proxy is unreachable, so the SQLite amalgamation (%s) cannot be fetched: %s\n"+
				"(this test needs network access to the proxy; in CI it must run)", sqliteModule, msg)
		}
		t.Fatalf("go mod download -json %s: %v\n%s", sqliteModule, runErr, msg)
	}
	for _, f := range []string{"sqlite3-binding.c", "sqlite3-binding.h"} {
		if _, err := os.Stat(filepath.Join(mod.Dir, f)); err != nil {
			t.Fatalf("%s has no %s: %v", sqliteModule, f, err)
		}
	}
	return mod.Dir
}

// unreachableProxy reports whether a go mod download failure says the
// proxy could not be reached (as opposed to, say, a bad checksum).
func unreachableProxy(msg string) bool {
	for _, s := range []string{
		"dial tcp", "no such host", "connection refused", "network is unreachable",
		"i/o timeout", "TLS handshake timeout", "proxyconnect", "GOPROXY=off",
		"Temporary failure in name resolution", "server misbehaving",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// sqliteFlags are gcc's flags for both builds of the SQLite target: no
// mutexes and no dlopen, so the program is one thread and one module.
var sqliteFlags = []string{"-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION"}

// TestSQLiteGcov is issue 10's acceptance test at scale: the SQLite
// amalgamation (256,000 lines, 46,000 with code for gcov) driven by
// testdata/sqlite/driver.c, built -g -O0 and run under patchprof --lines
// --funcs, against gcov on a --coverage build of the same source, line by
// line in both directions: every line of sqlite3-binding.c must have gcov's
// count in patchprof, or be one of the differences pinned, with both
// values, in testdata/sqlite/known-diffs.txt, and at least 99.99% of
// gcov's lines must be equal (issue 10's bar). A difference that appears, disappears
// or changes fails the test; PATCHPROF_UPDATE_SQLITE=1 rewrites the file
// after a change has been checked. Every function gcov lists must have
// patchprof's call count.
//
// Every basic block of SQLite is a trap, so the workload is small (about 4
// million hits, a minute under the default engine, three under classic on
// the 2-CPU development VM); it runs under both engines.
func TestSQLiteGcov(t *testing.T) {
	needs(t)
	mustHaveGcov(t)
	t.Parallel()
	amalg := sqliteAmalgamation(t)
	srcPath := filepath.Join(amalg, "sqlite3-binding.c")
	driver := filepath.Join(testdataDir, "sqlite", "driver.c")
	flags := append([]string{"-I", amalg}, sqliteFlags...)

	start := time.Now()
	// buildCFrom puts its flags before the source, so the amalgamation
	// goes in among them.
	exe := buildCFrom(t, driver, append(append([]string{"-g", "-O0"}, flags...), srcPath)...)
	t.Logf("plain build (gcc -g -O0): %v", time.Since(start).Round(time.Millisecond))
	plainOut, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatalf("running %s: %v", exe, err)
	}

	start = time.Now()
	want := gcovJSON(t, gcovRun{src: srcPath, others: []string{driver}, flags: flags})
	t.Logf("coverage build, run and gcov --json-format: %v", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	report := filepath.Join(t.TempDir(), "report.txt")
	res, p := runProfile(t, runOpts{
		args:    []string{"--lines", "--funcs", "-o", report, exe},
		timeout: 15 * time.Minute,
	})
	t.Logf("patchprof --lines --funcs: %v", time.Since(start).Round(time.Millisecond))
	wantExitCode(t, res, p, 0)
	if res.stdout != string(plainOut) {
		t.Errorf("%s: the target printed %q, without patchprof %q", res.cmdline, res.stdout, plainOut)
	}

	const base = "sqlite3-binding.c"
	src := sourceLines(t, srcPath)
	text := func(line int) string {
		if line >= 1 && line <= len(src) {
			return strings.TrimSpace(src[line-1])
		}
		return "?"
	}

	// Lines.
	wantLines := make(map[int]int64)
	for _, l := range want.Lines {
		wantLines[l.LineNumber] += l.Count
	}
	got := linesOf(p, base)
	moves := moveFunctionEntries(wantLines, got, src)
	var lines []int
	for line := range wantLines {
		lines = append(lines, line)
	}
	sort.Ints(lines)
	// A differing line either has another count in patchprof or none at
	// all (no line-table row: gcov counts a case label's block on the
	// label, gcc's line table starts it at the statement below).
	var other, uncounted []string
	kinds := make(map[string]int)
	for _, line := range lines {
		g, ok := got[line]
		switch {
		case ok && g == wantLines[line]:
		case ok:
			other = append(other, fmt.Sprintf("  %s:%d %-60.60q gcov %d, patchprof %d", base, line, text(line), wantLines[line], g))
		default:
			uncounted = append(uncounted, fmt.Sprintf("  %s:%d %-60.60q gcov %d, patchprof no count", base, line, text(line), wantLines[line]))
			kinds[lineKind(text(line))]++
		}
	}
	ppOnly := 0
	var only []string
	for line := range got {
		if _, ok := wantLines[line]; !ok {
			ppOnly++
			only = append(only, fmt.Sprintf("  %s:%d %-60.60q gcov -, patchprof %d", base, line, text(line), got[line]))
		}
	}
	sort.Strings(only)
	// PATCHPROF_SQLITE_DIFFS=FILE writes every difference there, for
	// working on the line model.
	if name := os.Getenv("PATCHPROF_SQLITE_DIFFS"); name != "" {
		all := append(append(append([]string{}, other...), uncounted...), only...)
		if err := os.WriteFile(name, []byte(strings.Join(all, "\n")+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
	differ := len(other) + len(uncounted)
	equal := len(lines) - differ
	pct := 100 * float64(equal) / float64(len(lines))
	summary := fmt.Sprintf("%d of gcov's %d lines with code in %s equal (%.4f%%); %d differ: %d with another count, %d without a count in patchprof (%s)",
		equal, len(lines), base, pct, differ, len(other), len(uncounted), kindSummary(kinds))
	t.Logf("lines: %s; %d function entries moved from gcov's line to the opening brace; %d lines only patchprof counts",
		summary, len(moves), ppOnly)

	// Functions.
	gotFuncs := make(map[string]int64)
	for _, f := range p.Functions {
		if filepath.Base(f.File) == base {
			gotFuncs[f.Name] += f.Count
		}
	}
	fns := append([]gcovJSONFunction(nil), want.Functions...)
	sort.Slice(fns, func(i, j int) bool { return fns[i].StartLine < fns[j].StartLine })
	var badFuncs []string
	for _, fn := range fns {
		g, ok := gotFuncs[fn.Name]
		if ok && g == fn.ExecutionCount {
			continue
		}
		gs := fmt.Sprint(g)
		if !ok {
			gs = "not in the profile"
		}
		badFuncs = append(badFuncs, fmt.Sprintf("  %s (%s:%d) gcov %d, patchprof %s", fn.Name, base, fn.StartLine, fn.ExecutionCount, gs))
	}
	t.Logf("functions: %d of gcov's %d functions in %s equal; %d differ",
		len(fns)-len(badFuncs), len(fns), base, len(badFuncs))

	// Every difference, pinned or not.
	diffs := make(map[int]string)
	for _, line := range lines {
		if g, ok := got[line]; !ok {
			diffs[line] = fmt.Sprintf("%d -", wantLines[line])
		} else if g != wantLines[line] {
			diffs[line] = fmt.Sprintf("%d %d", wantLines[line], g)
		}
	}
	for line, g := range got {
		if _, ok := wantLines[line]; !ok {
			diffs[line] = fmt.Sprintf("- %d", g)
		}
	}
	checkKnownDiffs(t, filepath.Join(testdataDir, "sqlite", "known-diffs.txt"), diffs, text)
	t.Logf("lines: %s (goal: 99.99%%)", summary)
	// Issue 10's bar, held as well as the pinned lines: a new exception
	// can be pinned, but not past it.
	if pct < 99.99 {
		t.Errorf("%s: %s, below issue 10's 99.99%%", res.cmdline, summary)
	}
	if len(badFuncs) > 0 {
		t.Errorf("%s: %d of gcov's %d functions of %s have another call count in patchprof\n%s",
			res.cmdline, len(badFuncs), len(fns), base, firstN("differing", badFuncs))
	}
}

// firstN lists the first 30 of a kind of difference under a heading.
func firstN(what string, diffs []string) string {
	if len(diffs) == 0 {
		return ""
	}
	n := min(30, len(diffs))
	return fmt.Sprintf("the first %d of %d %s:\n%s\n", n, len(diffs), what, strings.Join(diffs[:n], "\n"))
}

var gotoLabelRE = regexp.MustCompile(`^[A-Za-z_]\w*:`)

// lineKind names the kind of C source line, to sum up the lines patchprof
// has no count for.
func lineKind(text string) string {
	switch {
	case strings.HasPrefix(text, "case ") || strings.HasPrefix(text, "default:") || strings.HasPrefix(text, "default :"):
		return "case labels"
	case gotoLabelRE.MatchString(text):
		return "goto labels"
	case strings.HasPrefix(text, "SQLITE_API ") || strings.HasPrefix(text, "SQLITE_PRIVATE ") || strings.HasPrefix(text, "static "):
		return "function declarators"
	}
	return "other"
}

// kindSummary renders lineKind counts, most frequent first.
func kindSummary(kinds map[string]int) string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if kinds[names[i]] != kinds[names[j]] {
			return kinds[names[i]] > kinds[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%d %s", kinds[k], k)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// checkKnownDiffs compares diffs (line -> "GCOV PATCHPROF", "-" for no
// count) with the pinned differences in the file name, one "LINE GCOV
// PATCHPROF" per line ('#' starts a comment), and fails the test on every
// line that differs. With PATCHPROF_UPDATE_SQLITE=1 it rewrites the file.
func checkKnownDiffs(t *testing.T, name string, diffs map[int]string, text func(int) string) {
	t.Helper()
	lines := make([]int, 0, len(diffs))
	for l := range diffs {
		lines = append(lines, l)
	}
	sort.Ints(lines)
	if os.Getenv("PATCHPROF_UPDATE_SQLITE") != "" {
		old, err := os.ReadFile(name)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(rewriteKnownDiffs(string(old), lines, diffs)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	known := make(map[int]string)
	for _, row := range strings.Split(string(data), "\n") {
		f := strings.Fields(row)
		if len(f) != 3 || strings.HasPrefix(f[0], "#") {
			continue
		}
		l, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("%s: bad line %q", name, row)
		}
		known[l] = f[1] + " " + f[2]
	}
	var bad []string
	for _, l := range lines {
		if k, ok := known[l]; !ok {
			bad = append(bad, fmt.Sprintf("  %d %-60.60q gcov/patchprof %s: a new difference", l, text(l), diffs[l]))
		} else if k != diffs[l] {
			bad = append(bad, fmt.Sprintf("  %d %-60.60q gcov/patchprof %s, pinned as %s", l, text(l), diffs[l], k))
		}
	}
	for l, k := range known {
		if _, ok := diffs[l]; !ok {
			bad = append(bad, fmt.Sprintf("  %d %-60.60q pinned as %s, now agrees with gcov: remove it", l, text(l), k))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%d lines of sqlite3-binding.c differ from the pinned differences in %s:\n%s", len(bad), name, strings.Join(bad, "\n"))
	}
	t.Logf("%d differences from gcov, all pinned in %s", len(lines), name)
}

// rewriteKnownDiffs returns the pinned-differences file old rewritten with
// diffs (for the sorted lines): every comment line of old is kept (the
// header, and the documented exceptions among the pins), each run of
// comments before the first pin at or after the pin it preceded; a new
// file gets the standard header.
func rewriteKnownDiffs(old string, lines []int, diffs map[int]string) string {
	type note struct {
		before int // the pin the comments preceded; 0: none (at the end)
		text   []string
	}
	var notes []note
	var run []string
	for _, row := range strings.Split(strings.TrimRight(old, "\n"), "\n") {
		f := strings.Fields(row)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			if strings.TrimSpace(row) != "" {
				run = append(run, row)
			}
			continue
		}
		if l, err := strconv.Atoi(f[0]); err == nil && len(run) > 0 {
			notes = append(notes, note{before: l, text: run})
			run = nil
		}
	}
	if len(run) > 0 {
		notes = append(notes, note{text: run})
	}
	var b strings.Builder
	if len(notes) == 0 {
		b.WriteString("# Lines of sqlite3-binding.c (" + sqliteModule + ", gcc -g -O0) where patchprof's\n")
		b.WriteString("# count still differs from gcov's: LINE GCOV PATCHPROF (\"-\": no count).\n")
		b.WriteString("# Open work of issue 10. Rewritten by PATCHPROF_UPDATE_SQLITE=1 go test -run SQLiteGcov ./integration/\n")
	}
	k := 0
	for _, l := range lines {
		for ; k < len(notes) && notes[k].before > 0 && notes[k].before <= l; k++ {
			b.WriteString(strings.Join(notes[k].text, "\n") + "\n")
		}
		fmt.Fprintf(&b, "%d %s\n", l, diffs[l])
	}
	for ; k < len(notes); k++ {
		b.WriteString(strings.Join(notes[k].text, "\n") + "\n")
	}
	return b.String()
}

// TestRewriteKnownDiffs keeps the header and the documented exceptions
// when the pins are rewritten: a pin that went away leaves its comment
// before the next pin.
func TestRewriteKnownDiffs(t *testing.T) {
	old := "# header\n# more\n10 1 -\n# why 20 is impossible\n20 0 -\n30 5 4\n# trailing\n"
	got := rewriteKnownDiffs(old, []int{20, 25, 40}, map[int]string{20: "0 -", 25: "3 2", 40: "1 0"})
	want := "# header\n# more\n# why 20 is impossible\n20 0 -\n25 3 2\n40 1 0\n# trailing\n"
	if got != want {
		t.Errorf("rewriteKnownDiffs:\n%s\nwant:\n%s", got, want)
	}
	if got := rewriteKnownDiffs("", []int{7}, map[int]string{7: "1 -"}); !strings.HasPrefix(got, "# Lines of sqlite3-binding.c") || !strings.HasSuffix(got, "\n7 1 -\n") {
		t.Errorf("a new file: %q", got)
	}
}
