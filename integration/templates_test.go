//go:build linux

package integration

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTemplateInstances runs testdata/templates.cpp (a function template
// used with int 7 times and with double 3 times, a class template's
// constructor and member used with int and long, and a template on one
// line) once under patchprof --blocks, and compares each instance's own
// counts with the real tools run on a gcov build of the same source: the
// .gcov export's instance blocks with gcov -b -c's, the lcov export's
// FN, FNDA and DA with lcov --capture's, and the gcov-json export's
// per-instance lines and functions with gcov --json-format's. The listing
// shows the instances apart under --instances.
func TestTemplateInstances(t *testing.T) {
	needs(t)
	mustHaveGcov(t)
	t.Parallel()
	const src = "templates.cpp"
	exe := buildC(t, src, "-g", "-O0")
	save := filepath.Join(t.TempDir(), "p.json")
	if res := run(t, runOpts{args: []string{"--blocks", "--save", save, exe}}); res.code != 0 {
		t.Fatalf("%s", res)
	}
	gdir, gbase := coverageBuildRun(t, gcovRun{src: src})
	gcov := func(args ...string) {
		t.Helper()
		cmd := exec.Command("gcov", append(args, gbase)...)
		cmd.Dir = gdir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcov %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	t.Run("listing", func(t *testing.T) {
		res := run(t, runOpts{args: []string{"report", "--instances", save}})
		if res.code != 0 {
			t.Fatalf("%s", res)
		}
		ifLine := itoa(markerLine(t, src, "BIGGEST_IF"))
		for _, want := range []string{
			"templates.cpp  " + pad(ifLine) + "       10:",
			": double biggest<double>(double, double):",
			": int biggest<int>(int, int):",
			": Box<long>::grow(int):",
			"templates.cpp  " + pad(ifLine) + "        7:",
		} {
			if !strings.Contains(res.stdout, want) {
				t.Errorf("the listing with --instances lacks %q:\n%s", want, res.stdout)
			}
		}
		plain := run(t, runOpts{args: []string{"report", save}})
		if !strings.Contains(plain.stdout, "note: the counts of 8 template instances are summed") || strings.Contains(plain.stdout, "------------------") {
			t.Errorf("without --instances, the listing should sum the instances and say so:\n%s", plain.stdout)
		}
	})

	// The .gcov text: every group of instances, from its first rule to
	// the rule closing it, as gcov -b -c writes it. The rest of the file
	// is compared by TestGcovTextMatchesGcov's rules elsewhere; its
	// header differs by construction (Source is the absolute path, Graph
	// and Data name no .gcno or .gcda).
	t.Run("gcov", func(t *testing.T) {
		gcov("-b", "-c")
		want := gcovInstanceBlocks(readFile(t, filepath.Join(gdir, gbase+".gcov")))
		dir := t.TempDir()
		if res := run(t, runOpts{args: []string{"report", "--format", "gcov", "-o", dir, save}}); res.code != 0 {
			t.Fatalf("%s", res)
		}
		got := gcovInstanceBlocks(readFile(t, filepath.Join(dir, src+".gcov")))
		if len(want) != 4 {
			t.Fatalf("gcov wrote %d groups of instances, want 4:\n%s", len(want), strings.Join(want, "\n"))
		}
		if !slices.Equal(got, want) {
			t.Errorf("the .gcov export's instances differ from gcov -b -c's:\npatchprof:\n%s\ngcov:\n%s",
				strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	// lcov: one FN and FNDA per instance, as lcov --capture writes them;
	// its DA records are one per instance (lcov 1.16 copies gcov's
	// per-instance lines), which lcov's readers add up: patchprof writes
	// the sum, one DA a line. Order is no part of the format, so records
	// are compared as sets.
	t.Run("lcov", func(t *testing.T) {
		lcov, err := exec.LookPath("lcov")
		if err != nil {
			t.Skipf("lcov not found in PATH (%v): it captures the gcov build (Debian package lcov)", err)
		}
		capture := exec.Command(lcov, "--capture", "-q", "-d", gdir, "-o", filepath.Join(gdir, "gcov.info"))
		if out, err := capture.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(capture.Args, " "), err, out)
		}
		info := filepath.Join(t.TempDir(), "p.info")
		if res := run(t, runOpts{args: []string{"report", "--format", "lcov", "-o", info, save}}); res.code != 0 {
			t.Fatalf("%s", res)
		}
		wantFN, wantDA := lcovRecords(t, filepath.Join(gdir, "gcov.info"), src)
		gotFN, gotDA := lcovRecords(t, info, src)
		if !slices.Equal(gotFN, wantFN) {
			t.Errorf("FN and FNDA records differ:\npatchprof:\n%s\nlcov:\n%s", strings.Join(gotFN, "\n"), strings.Join(wantFN, "\n"))
		}
		if !maps.Equal(gotDA, wantDA) {
			t.Errorf("DA (summed by line) differs:\npatchprof: %v\nlcov:      %v", gotDA, wantDA)
		}
	})

	// gcov-json: the entries of the instances' lines (every line entry
	// but main's, the one function that is no instance), in order, and
	// the instances' functions. Columns are left out: patchprof does not
	// know them (its start_column and end_column are 0).
	t.Run("gcov-json", func(t *testing.T) {
		gcov("--json-format", "-b", "-c")
		want := readInstanceJSON(t, filepath.Join(gdir, strings.TrimSuffix(gbase, filepath.Ext(gbase))+".gcov.json.gz"))
		gz := filepath.Join(t.TempDir(), "p.gcov.json.gz")
		if res := run(t, runOpts{args: []string{"report", "--format", "gcov-json", "-o", gz, save}}); res.code != 0 {
			t.Fatalf("%s", res)
		}
		got := readInstanceJSON(t, gz)
		if len(want.lines) == 0 {
			t.Fatal("gcov --json-format wrote no instance lines")
		}
		if !slices.Equal(got.lines, want.lines) {
			t.Errorf("instance lines differ:\npatchprof:\n%s\ngcov:\n%s", strings.Join(got.lines, "\n"), strings.Join(want.lines, "\n"))
		}
		if !slices.Equal(got.funcs, want.funcs) {
			t.Errorf("instance functions differ:\npatchprof:\n%s\ngcov:\n%s", strings.Join(got.funcs, "\n"), strings.Join(want.funcs, "\n"))
		}
	})
}

// pad right-aligns a line number as the listing's LINE column does (4
// wide).
func pad(n string) string { return fmt.Sprintf("%4s", n) }

// gcovInstanceBlocks returns the groups of instances of .gcov text, each
// from its first "------------------" rule to the rule closing it.
func gcovInstanceBlocks(text string) []string {
	const rule = "------------------"
	var out []string
	var cur []string
	in := false
	lines := strings.Split(text, "\n")
	for k, l := range lines {
		if l != rule {
			if in {
				cur = append(cur, l)
			}
			continue
		}
		if !in {
			in, cur = true, []string{l}
			continue
		}
		cur = append(cur, l)
		// A rule followed by a NAME: line opens the next instance of
		// the group; any other closes the group.
		if k+1 < len(lines) && strings.HasSuffix(lines[k+1], ":") && !strings.Contains(lines[k+1], " ") {
			continue
		}
		out = append(out, strings.Join(cur, "\n"))
		in, cur = false, nil
	}
	return out
}

// lcovRecords returns the FN and FNDA records of the section of an lcov
// tracefile whose source is named src, sorted, and its DA counts summed
// by line. A constructor's FN names its complete-object symbol (C1), the
// first name the symbol table has at the address, where lcov names the
// base-object symbol (C2) GCC compiled and its notes name: C1 is made C2.
func lcovRecords(t *testing.T, path, src string) (fn []string, da map[int]int64) {
	t.Helper()
	da = map[int]int64{}
	in := false
	for _, l := range strings.Split(readFile(t, path), "\n") {
		switch {
		case strings.HasPrefix(l, "SF:"):
			in = filepath.Base(strings.TrimPrefix(l, "SF:")) == src
		case !in:
		case strings.HasPrefix(l, "FN:"), strings.HasPrefix(l, "FNDA:"):
			fn = append(fn, strings.Replace(l, "EC1E", "EC2E", 1))
		case strings.HasPrefix(l, "DA:"):
			line, count, _ := strings.Cut(strings.TrimPrefix(l, "DA:"), ",")
			n, _ := strconv.Atoi(line)
			c, _ := strconv.ParseInt(count, 10, 64)
			da[n] += c
		}
	}
	slices.Sort(fn)
	return fn, da
}

// instanceJSON is the part of a gcov JSON document that describes the
// instances: their line entries in order and their functions, sorted.
type instanceJSON struct {
	lines, funcs []string
}

// readInstanceJSON reads a .gcov.json.gz and returns the entries of its
// instances: every line and function but main's.
func readInstanceJSON(t *testing.T, path string) instanceJSON {
	t.Helper()
	var doc struct {
		Files []struct {
			File  string `json:"file"`
			Lines []struct {
				Line       int    `json:"line_number"`
				Function   string `json:"function_name"`
				Count      int64  `json:"count"`
				Unexecuted bool   `json:"unexecuted_block"`
				Branches   []struct {
					Count       int64 `json:"count"`
					Fallthrough bool  `json:"fallthrough"`
				} `json:"branches"`
			} `json:"lines"`
			Functions []struct {
				Name      string `json:"name"`
				Demangled string `json:"demangled_name"`
				Start     int    `json:"start_line"`
				End       int    `json:"end_line"`
				Count     int64  `json:"execution_count"`
			} `json:"functions"`
		} `json:"files"`
	}
	decodeGcovJSON(t, path, &doc)
	var out instanceJSON
	for _, file := range doc.Files {
		if filepath.Base(file.File) != "templates.cpp" {
			continue
		}
		for _, l := range file.Lines {
			if l.Function != "main" {
				out.lines = append(out.lines, fmt.Sprintf("%s:%d count %d unexecuted %v branches %v", l.Function, l.Line, l.Count, l.Unexecuted, l.Branches))
			}
		}
		for _, fn := range file.Functions {
			if fn.Name != "main" {
				out.funcs = append(out.funcs, fmt.Sprintf("%s (%s) lines %d-%d called %d", fn.Name, fn.Demangled, fn.Start, fn.End, fn.Count))
			}
		}
	}
	slices.Sort(out.funcs)
	return out
}
