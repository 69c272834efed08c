package output

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

// exportSources are the synthetic sources the lcov and gcov exports are
// tested over: a.c has 10 lines, b.c 4 (its last line has no newline).
var exportSources = map[string]string{
	"a.c": "#include <stdio.h>\n" +
		"\n" +
		"static int sq(int x)\n" +
		"{\n" +
		"\treturn x * x;\n" +
		"}\n" +
		"\n" +
		"int main(void)\n" +
		"{\n" +
		"\treturn sq(2) + unused();\n",
	"b.c": "int unused(void)\n" +
		"{\n" +
		"\treturn 0;\n" +
		"}",
}

// exportProfile is a lines-and-funcs profile over exportSources in root,
// with its slices out of order (the writers must sort) and a function
// without a source file (_start), which the exports leave out.
func exportProfile(root string) *profile.Profile {
	a, b := filepath.Join(root, "a.c"), filepath.Join(root, "b.c")
	return &profile.Profile{
		Version:    profile.Version,
		Executable: filepath.Join(root, "a"),
		Args:       []string{"./a"},
		Mode:       profile.ModeLinesFuncs,
		Exit:       profile.Exit{Code: intp(0)},
		Lines: []profile.Line{
			{File: b, Line: 3, Count: 0},
			{File: a, Line: 10, Count: 1},
			{File: a, Line: 3, Count: 5},
			{File: a, Line: 5, Count: 5},
			{File: a, Line: 6, Count: 0},
			{File: a, Line: 8, Count: 1},
			{File: b, Line: 1, Count: 0},
		},
		Functions: []profile.Function{
			{Name: "main", Count: 1, File: a, Line: 8, Address: 0x401150},
			{Name: "_start", Count: 1, Address: 0x401040},
			{Name: "unused", Count: 0, File: b, Line: 1, Address: 0x401180},
			{Name: "sq", Count: 5, File: a, Line: 3, Address: 0x401126},
		},
	}
}

// writeExportSources writes exportSources into dir.
func writeExportSources(t *testing.T, dir string) {
	t.Helper()
	for name, text := range exportSources {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkGolden compares got with testdata/NAME, or rewrites it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./output -update to create it)", err)
	}
	if d := unifiedDiff(golden, "got", string(want), got); d != "" {
		t.Errorf("output differs from %s (go test ./output -update to accept):\n%s", golden, d)
	}
}

func TestWriteLCOVGolden(t *testing.T) {
	funcsOnly := exportProfile(dir)
	funcsOnly.Mode, funcsOnly.Lines = profile.ModeFuncs, []profile.Line{}
	linesOnly := exportProfile(dir)
	linesOnly.Mode, linesOnly.Functions = profile.ModeLines, []profile.Function{}
	for _, tc := range []struct {
		golden string
		p      *profile.Profile
	}{
		{"lcov/lines_funcs.info", exportProfile(dir)},
		{"lcov/funcs.info", funcsOnly},
		{"lcov/lines.info", linesOnly},
		{"lcov/empty.info", &profile.Profile{Mode: profile.ModeLinesFuncs}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			before := *tc.p
			before.Lines = slices.Clone(tc.p.Lines)
			before.Functions = slices.Clone(tc.p.Functions)
			var buf bytes.Buffer
			if err := WriteLCOV(&buf, tc.p); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.golden, buf.String())
			if !slices.Equal(before.Lines, tc.p.Lines) || !slices.Equal(before.Functions, tc.p.Functions) {
				t.Error("WriteLCOV modified the profile")
			}
			// The input order must not matter.
			rev := *tc.p
			rev.Lines = slices.Clone(tc.p.Lines)
			rev.Functions = slices.Clone(tc.p.Functions)
			slices.Reverse(rev.Lines)
			slices.Reverse(rev.Functions)
			var again bytes.Buffer
			if err := WriteLCOV(&again, &rev); err != nil {
				t.Fatal(err)
			}
			if d := unifiedDiff("in order", "reversed", buf.String(), again.String()); d != "" {
				t.Errorf("output depends on the order of the profile's slices:\n%s", d)
			}
		})
	}
}

func TestWriteLCOVWriteError(t *testing.T) {
	if err := WriteLCOV(failWriter{}, exportProfile(dir)); !errors.Is(err, errWrite) {
		t.Errorf("WriteLCOV to a failing writer: got %v, want %v", err, errWrite)
	}
}

// genhtmlSummary matches the totals genhtml prints when it is done, e.g.
// "  lines......: 57.1% (4 of 7 lines)".
var genhtmlSummary = regexp.MustCompile(`(?m)^\s*(lines|functions)\.+: [0-9.]+% \((\d+) of (\d+) (?:lines|functions)\)$`)

// TestWriteLCOVGenhtml feeds the tracefile to its real consumer: genhtml
// (lcov 1.16) must accept it (`genhtml -o OUT FILE.info`, exit 0) and
// report the totals the profile implies, and `lcov --list FILE.info` must
// report them per file.
func TestWriteLCOVGenhtml(t *testing.T) {
	genhtml, err := exec.LookPath("genhtml")
	if err != nil {
		t.Skip("genhtml not in PATH (Debian package lcov): cannot check the tracefile with its consumer")
	}
	root := t.TempDir()
	writeExportSources(t, root)
	p := exportProfile(root)
	info := filepath.Join(root, "a.info")
	var buf bytes.Buffer
	if err := WriteLCOV(&buf, p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(info, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	// What the profile implies: every line of p.Lines is instrumented,
	// every function with a file is (so _start is not).
	want := map[string][2]int{} // kind -> {hit, found}
	for _, l := range p.Lines {
		w := want["lines"]
		w[1]++
		if l.Count > 0 {
			w[0]++
		}
		want["lines"] = w
	}
	for _, fn := range p.Functions {
		if fn.File == "" {
			continue
		}
		w := want["functions"]
		w[1]++
		if fn.Count > 0 {
			w[0]++
		}
		want["functions"] = w
	}
	if want["lines"] != [2]int{4, 7} || want["functions"] != [2]int{2, 3} {
		t.Fatalf("test profile changed: want %v", want) // keeps the numbers below honest
	}

	out := filepath.Join(root, "html")
	cmd := exec.Command(genhtml, "-o", out, info)
	output, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s\ntracefile:\n%s", cmd, err, output, buf.String())
	}
	got := map[string][2]int{}
	for _, m := range genhtmlSummary.FindAllStringSubmatch(string(output), -1) {
		hit, _ := strconv.Atoi(m[2])
		found, _ := strconv.Atoi(m[3])
		got[m[1]] = [2]int{hit, found}
	}
	for _, kind := range []string{"lines", "functions"} {
		if got[kind] != want[kind] {
			t.Errorf("genhtml reports %s %d of %d, want %d of %d\n%s",
				kind, got[kind][0], got[kind][1], want[kind][0], want[kind][1], output)
		}
	}
	// genhtml strips the common prefix of the sources from the page
	// paths, so look for the source pages by name.
	pages := map[string]bool{}
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			pages[filepath.Base(path)] = true
		}
		return nil
	})
	for _, page := range []string{"index.html", "a.c.gcov.html", "b.c.gcov.html", "a.c.func.html"} {
		if !pages[page] {
			t.Errorf("genhtml did not write %s\n%s", page, output)
		}
	}

	lcov, err := exec.LookPath("lcov")
	if err != nil {
		t.Log("lcov not in PATH: per-file check skipped")
		return
	}
	cmd = exec.Command(lcov, "--rc", "lcov_function_coverage=1", "--list-full-path", "--list", info)
	output, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, output)
	}
	// Rows look like "/tmp/x/a.c |66.7%  6| 100%   2|    -    0"
	// (lines rate and count, functions rate and count, branches).
	perFile := map[string]string{
		filepath.Join(root, "a.c"): "5 lines, 2 functions",
		filepath.Join(root, "b.c"): "2 lines, 1 functions",
	}
	row := regexp.MustCompile(`(?m)^(\S+)\s*\|\s*\S+\s+(\d+)\|\s*\S+\s+(\d+)\|`)
	seen := 0
	for _, m := range row.FindAllStringSubmatch(string(output), -1) {
		w, ok := perFile[m[1]]
		if !ok {
			continue
		}
		seen++
		if g := m[2] + " lines, " + m[3] + " functions"; g != w {
			t.Errorf("lcov --list: %s has %s, want %s\n%s", m[1], g, w, output)
		}
	}
	if seen != len(perFile) {
		t.Errorf("lcov --list listed %d of the %d files\n%s", seen, len(perFile), output)
	}
}
