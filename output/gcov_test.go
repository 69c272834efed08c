package output

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

// exportReadFile serves exportSources under dir and fails for the rest.
func exportReadFile(name string) ([]byte, error) {
	if filepath.Dir(name) == dir {
		if s, ok := exportSources[filepath.Base(name)]; ok {
			return []byte(s), nil
		}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// gcovFiles runs WriteGcov into a fresh directory and returns the files it
// wrote, each as "==> NAME <==" and its text, in order.
func gcovFiles(t *testing.T, p *profile.Profile, readFile func(string) ([]byte, error)) string {
	t.Helper()
	out := t.TempDir()
	paths, err := WriteGcov(out, p, readFile)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, path := range paths {
		if filepath.Dir(path) != out {
			t.Errorf("WriteGcov wrote %s, outside %s", path, out)
		}
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("==> " + filepath.Base(path) + " <==\n")
		b.Write(text)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(paths) {
		t.Errorf("WriteGcov returned %d paths but wrote %d files", len(paths), len(entries))
	}
	return b.String()
}

func TestWriteGcovGolden(t *testing.T) {
	noB := func(name string) ([]byte, error) {
		if name == dir+"/b.c" {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return exportReadFile(name)
	}
	shortA := func(name string) ([]byte, error) {
		if name == dir+"/a.c" {
			return []byte("#include <stdio.h>\r\n\r\nstatic int sq(int x)\r\n"), nil
		}
		return exportReadFile(name)
	}
	sameBase := exportProfile(dir)
	sameBase.Lines = append(sameBase.Lines,
		profile.Line{File: dir + "/lib/a.c", Line: 2, Count: 7},
		profile.Line{File: dir + "/lib/../old/a.c", Line: 1, Count: 12345678901})
	funcsOnly := exportProfile(dir)
	funcsOnly.Mode, funcsOnly.Lines = profile.ModeFuncs, []profile.Line{}
	// A lines-only profile: the calls are entry counts; main's and sq's
	// flow was counted, unused's was not, so it gets no function row.
	linesOnly := exportProfile(dir)
	linesOnly.Mode = profile.ModeLines
	for i, f := range linesOnly.Functions {
		switch f.Name {
		case "main":
			linesOnly.Functions[i].Blocks, linesOnly.Functions[i].BlocksExecuted, linesOnly.Functions[i].Returns = 4, 3, 1
		case "sq":
			linesOnly.Functions[i].Blocks, linesOnly.Functions[i].BlocksExecuted, linesOnly.Functions[i].Returns = 1, 1, 5
		}
	}
	for _, tc := range []struct {
		name     string
		p        *profile.Profile
		readFile func(string) ([]byte, error)
	}{
		{"lines_funcs", exportProfile(dir), exportReadFile},
		{"missing_source", exportProfile(dir), noB},
		{"short_source", exportProfile(dir), shortA},
		{"same_base", sameBase, exportReadFile},
		{"funcs", funcsOnly, exportReadFile},
		{"lines", linesOnly, exportReadFile},
		{"empty", &profile.Profile{Mode: profile.ModeLinesFuncs}, exportReadFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, funcs := slices.Clone(tc.p.Lines), slices.Clone(tc.p.Functions)
			got := gcovFiles(t, tc.p, tc.readFile)
			checkGolden(t, "gcov/"+tc.name+".golden", got)
			if !slices.Equal(lines, tc.p.Lines) || !slices.Equal(funcs, tc.p.Functions) {
				t.Error("WriteGcov modified the profile")
			}
			rev := *tc.p
			rev.Lines, rev.Functions = slices.Clone(lines), slices.Clone(funcs)
			slices.Reverse(rev.Lines)
			slices.Reverse(rev.Functions)
			if d := unifiedDiff("in order", "reversed", got, gcovFiles(t, &rev, tc.readFile)); d != "" {
				t.Errorf("output depends on the order of the profile's slices:\n%s", d)
			}
		})
	}
}

func TestMangleGcovPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/home/ann/src/x.c", "#home#ann#src#x.c"},
		{"/home/ann/src/../lib/x.c", "#home#ann#src#^#lib#x.c"},
		{"/home/ann/./src/x.c", "#home#ann#src#x.c"},
		{"x.c", "x.c"},
	} {
		if got := mangleGcovPath(tc.in); got != tc.want {
			t.Errorf("mangleGcovPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWriteGcovErrors(t *testing.T) {
	// Two paths that mangle alike: only a rename can tell them apart.
	p := &profile.Profile{Lines: []profile.Line{
		{File: "/a/./x.c", Line: 1, Count: 1},
		{File: "/a/x.c", Line: 1, Count: 1},
	}}
	out := t.TempDir()
	_, err := WriteGcov(out, p, exportReadFile)
	var nameErr *GcovNameError
	if !errors.As(err, &nameErr) || nameErr.Name != "#a#x.c.gcov" {
		t.Errorf("WriteGcov with clashing names: got %v, want a *GcovNameError for #a#x.c.gcov", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("WriteGcov wrote %d files before failing, want none", len(entries))
	}

	_, err = WriteGcov(filepath.Join(out, "no-such-dir"), exportProfile(dir), exportReadFile)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteGcov into a missing directory: got %v, want an error wrapping fs.ErrNotExist", err)
	}
}

// gcovrJSON is the part of gcovr's JSON report (format 0.3) the test reads.
type gcovrJSON struct {
	Files []struct {
		File  string `json:"file"`
		Lines []struct {
			Line    int    `json:"line_number"`
			Count   uint64 `json:"count"`
			NonCode bool   `json:"gcovr/noncode"`
		} `json:"lines"`
		Functions []struct {
			Name  string `json:"name"`
			Line  int    `json:"lineno"`
			Count uint64 `json:"execution_count"`
		} `json:"functions"`
	} `json:"files"`
}

// TestWriteGcovGcovr feeds the .gcov files to a real consumer: gcovr
// (5.2 on Debian 12) reads existing .gcov files with -g/--use-gcov-files,
// and -k/--keep stops it deleting them. The test runs
//
//	gcovr -g -k -r ROOT --json-pretty -o OUT.json ROOT/gcov
//
// and checks that gcovr reads back, per source file, every counted line
// with its count and every function with its entry line and call count.
func TestWriteGcovGcovr(t *testing.T) {
	gcovr, err := exec.LookPath("gcovr")
	if err != nil {
		t.Skip("gcovr not in PATH (Debian package gcovr): cannot check the .gcov files with their consumer")
	}
	root := t.TempDir()
	writeExportSources(t, root)
	gcovDir := filepath.Join(root, "gcov")
	if err := os.Mkdir(gcovDir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := exportProfile(root)
	paths, err := WriteGcov(gcovDir, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(root, "gcovr.json")
	cmd := exec.Command(gcovr, "-g", "-k", "-r", root, "--json-pretty", "-o", report, gcovDir)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, output)
	}
	for _, path := range paths {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("gcovr -k did not keep %s: %v", path, err)
		}
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var r gcovrJSON
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("gcovr's JSON report: %v\n%s", err, b)
	}

	type fn struct {
		line  int
		count uint64
	}
	wantLines := map[string]map[int]uint64{}
	wantFuncs := map[string]map[string]fn{}
	for _, l := range p.Lines {
		name := filepath.Base(l.File)
		// gcovr takes a line that never ran and holds nothing but a brace
		// for one without code (gcov_parser.py, _is_non_code).
		text := strings.Split(exportSources[name], "\n")[l.Line-1]
		if l.Count == 0 && strings.TrimSpace(text) == "}" {
			continue
		}
		if wantLines[name] == nil {
			wantLines[name] = map[int]uint64{}
		}
		wantLines[name][l.Line] = l.Count
	}
	for _, f := range p.Functions {
		if f.File == "" {
			continue
		}
		name := filepath.Base(f.File)
		if wantFuncs[name] == nil {
			wantFuncs[name] = map[string]fn{}
		}
		wantFuncs[name][f.Name] = fn{f.Line, f.Count}
	}
	gotLines := map[string]map[int]uint64{}
	gotFuncs := map[string]map[string]fn{}
	for _, f := range r.Files {
		gotLines[f.File] = map[int]uint64{}
		gotFuncs[f.File] = map[string]fn{}
		for _, l := range f.Lines {
			if !l.NonCode {
				gotLines[f.File][l.Line] = l.Count
			}
		}
		for _, g := range f.Functions {
			gotFuncs[f.File][g.Name] = fn{g.Line, g.Count}
		}
	}
	if len(gotLines) != len(wantLines) {
		t.Errorf("gcovr reports files %v, want %v", gotLines, wantLines)
	}
	for name, want := range wantLines {
		if got := gotLines[name]; !mapsEqual(got, want) {
			t.Errorf("gcovr reads the lines of %s as %v, want %v", name, got, want)
		}
		if got := gotFuncs[name]; !mapsEqual(got, wantFuncs[name]) {
			t.Errorf("gcovr reads the functions of %s as %v, want %v", name, got, wantFuncs[name])
		}
	}
}

func mapsEqual[K, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// gcovRow matches a count row of gcov's text output: count, line, text.
var gcovRow = regexp.MustCompile(`^ *([^ :]+): *(\d+):(.*)$`)

// gcovFunction matches gcov -b's function row.
var gcovFunction = regexp.MustCompile(`^function (\S+) called (\d+) returned \S+ blocks executed \S+$`)

// TestWriteGcovMatchesGcov checks WriteGcov against gcov itself: it builds
// testdata/gcov/prog.c with gcc --coverage -O0, runs it, reads the counts
// back from `gcov -t -b`, and checks that WriteGcov, given those counts,
// writes what gcov wrote byte for byte: rows, counts, source text and
// function rows. Allowed differences, from what patchprof does not know:
// gcov's branch and call rows are left out, its Graph and Data headers
// name the .gcno and .gcda files, and its function rows have real return
// and block percentages.
func TestWriteGcovMatchesGcov(t *testing.T) {
	work, run := coverageRun(t)
	prog := filepath.Join(work, "prog.c")
	ref := run("gcov", "-t", "-b", "prog.c")

	// The counts gcov found, as a profile, and gcov's text without what
	// patchprof cannot know.
	p := &profile.Profile{Mode: profile.ModeLinesFuncs}
	var want strings.Builder
	var pending []string
	sc := bufio.NewScanner(strings.NewReader(ref))
	for sc.Scan() {
		row := sc.Text()
		switch {
		case strings.HasPrefix(row, "branch "), strings.HasPrefix(row, "call "),
			strings.HasPrefix(row, "unconditional "):
			continue
		case strings.HasPrefix(row, "function "):
			m := gcovFunction.FindStringSubmatch(row)
			if m == nil {
				t.Fatalf("unexpected gcov function row %q", row)
			}
			pending = append(pending, m[1], m[2])
			want.WriteString(strings.SplitAfter(row, " returned ")[0] + "0% blocks executed 0%\n")
			continue
		}
		m := gcovRow.FindStringSubmatch(row)
		if m == nil {
			t.Fatalf("unexpected gcov row %q", row)
		}
		line, _ := strconv.Atoi(m[2])
		if line == 0 {
			key, _, _ := strings.Cut(m[3], ":")
			if key == "Graph" || key == "Data" {
				row = strings.SplitAfter(row, key+":")[0]
			}
			want.WriteString(row + "\n")
			continue
		}
		want.WriteString(row + "\n")
		for ; len(pending) > 0; pending = pending[2:] {
			n, _ := strconv.ParseUint(pending[1], 10, 64)
			p.Functions = append(p.Functions, profile.Function{Name: pending[0], Count: n,
				File: prog, Line: line, Address: profile.Address(0x401000 + uint64(16*len(p.Functions)))})
		}
		switch count := m[1]; count {
		case "-":
		case "#####":
			p.Lines = append(p.Lines, profile.Line{File: prog, Line: line})
		default:
			n, err := strconv.ParseUint(count, 10, 64)
			if err != nil {
				t.Fatalf("gcov row %q: count %q: %v (a '*' means the test program needs a line split)", row, count, err)
			}
			p.Lines = append(p.Lines, profile.Line{File: prog, Line: line, Count: n})
		}
	}
	if len(p.Lines) < 10 || len(p.Functions) != 4 {
		t.Fatalf("gcov output gave %d lines and %d functions, want >= 10 and 4:\n%s", len(p.Lines), len(p.Functions), ref)
	}

	outDir := filepath.Join(work, "out")
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	paths, err := WriteGcov(outDir, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || filepath.Base(paths[0]) != "prog.c.gcov" {
		t.Fatalf("WriteGcov wrote %v, want [%s]", paths, filepath.Join(outDir, "prog.c.gcov"))
	}
	got, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if d := unifiedDiff("gcov -t -b (normalized)", "WriteGcov", want.String(), string(got)); d != "" {
		t.Errorf("WriteGcov differs from gcov:\n%s", d)
	}
}
