//go:build linux

package integration

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestMergeAndExports: two saved runs merge into one profile with summed
// counts, and each export is read by its real consumer: genhtml for the lcov
// tracefile, go tool pprof for the protobuf profile, and the .gcov text.
func TestMergeAndExports(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, save := range []string{a, b} {
		if res := run(t, runOpts{args: []string{"--save", save, "--lines", "--funcs", exe}}); res.code != 0 {
			t.Fatalf("run: %s", res)
		}
	}
	merged := filepath.Join(dir, "m.json")
	if res := run(t, runOpts{args: []string{"merge", "-o", merged, a, b}}); res.code != 0 {
		t.Fatalf("merge: %s", res)
	}
	m, err := readProfile(merged)
	if err != nil {
		t.Fatal(err)
	}
	wantFunc(t, m, "work", 2000)
	wantLine(t, m, "calls.c", markerLine(t, "calls.c", "WORK_BODY"), 2000)

	t.Run("lcov", func(t *testing.T) {
		genhtml, err := exec.LookPath("genhtml")
		if err != nil {
			t.Skip("genhtml (Debian lcov) not installed")
		}
		info := filepath.Join(dir, "m.info")
		if res := run(t, runOpts{args: []string{"report", "--format", "lcov", "-o", info, merged}}); res.code != 0 {
			t.Fatalf("report: %s", res)
		}
		text := readFile(t, info)
		body := markerLine(t, "calls.c", "WORK_BODY")
		if !strings.Contains(text, "FNDA:2000,work\n") || !strings.Contains(text, "DA:"+itoa(body)+",2000\n") {
			t.Errorf("tracefile lacks FNDA:2000,work or DA:%d,2000:\n%s", body, text)
		}
		out, err := exec.Command(genhtml, "-o", filepath.Join(dir, "html"), info).CombinedOutput()
		if err != nil {
			t.Fatalf("genhtml: %v\n%s", err, out)
		}
		if !regexp.MustCompile(`functions\.*: [0-9.]+% \(\d+ of \d+ functions\)`).Match(out) {
			t.Errorf("genhtml summary not found:\n%s", out)
		}
	})
	t.Run("pprof", func(t *testing.T) {
		if _, err := exec.LookPath("go"); err != nil {
			t.Skip("go not in PATH: cannot run go tool pprof")
		}
		pb := filepath.Join(dir, "m.pb.gz")
		if res := run(t, runOpts{args: []string{"report", "--format", "pprof", "-o", pb, merged}}); res.code != 0 {
			t.Fatalf("report: %s", res)
		}
		out, err := exec.Command("go", "tool", "pprof", "-sample_index=calls", "-top", pb).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof: %v\n%s", err, out)
		}
		if !regexp.MustCompile(`(?m)^\s*2000\s.*\swork$`).Match(out) {
			t.Errorf("go tool pprof -top does not show work with 2000 calls:\n%s", out)
		}
		// Line samples sit in their function: -list annotates work's
		// source with its line counts.
		out, err = exec.Command("go", "tool", "pprof", "-sample_index=line_entries", "-list", "^work$", pb).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof -list: %v\n%s", err, out)
		}
		body := markerLine(t, "calls.c", "WORK_BODY")
		if !regexp.MustCompile(`(?m)^\s+2000\s+2000\s+` + itoa(body) + `:.*WORK_BODY`).Match(out) {
			t.Errorf("go tool pprof -list ^work$ does not show line %d entered 2000 times:\n%s", body, out)
		}
	})
	t.Run("gcov", func(t *testing.T) {
		gdir := filepath.Join(dir, "gcov")
		if res := run(t, runOpts{args: []string{"report", "--format", "gcov", "-o", gdir, merged}}); res.code != 0 {
			t.Fatalf("report: %s", res)
		}
		text := readFile(t, filepath.Join(gdir, "calls.c.gcov"))
		body := markerLine(t, "calls.c", "WORK_BODY")
		if !regexp.MustCompile(`(?m)^\s+2000:\s+` + itoa(body) + `:.*WORK_BODY`).MatchString(text) {
			t.Errorf("calls.c.gcov does not count line %d 2000 times:\n%s", body, text)
		}
	})
	t.Run("gcov-json", func(t *testing.T) {
		gz := filepath.Join(dir, "m.gcov.json.gz")
		if res := run(t, runOpts{args: []string{"report", "--format", "gcov-json", "-o", gz, merged}}); res.code != 0 {
			t.Fatalf("report: %s", res)
		}
		doc := readGcovJSON(t, gz)
		body := markerLine(t, "calls.c", "WORK_BODY")
		f := doc.file(t, "calls.c")
		if l, ok := f.line(body); !ok || l.Count != 2000 || l.FunctionName != "work" || l.UnexecutedBlock {
			t.Errorf("calls.c:%d in the gcov JSON: %+v, want count 2000 in work", body, l)
		}
		if fn, ok := f.function("work"); !ok || fn.ExecutionCount != 2000 || fn.DemangledName != "work" {
			t.Errorf("work in the gcov JSON: %+v, want execution_count 2000", fn)
		}
	})
	t.Run("cobertura", func(t *testing.T) {
		out := filepath.Join(dir, "m.xml")
		if res := run(t, runOpts{args: []string{"report", "--format", "cobertura", "-o", out, merged}}); res.code != 0 {
			t.Fatalf("report: %s", res)
		}
		body := markerLine(t, "calls.c", "WORK_BODY")
		text := readFile(t, out)
		if !strings.Contains(text, `<line number="`+itoa(body)+`" hits="2000" branch="false">`) {
			t.Errorf("the Cobertura report does not give calls.c:%d 2000 hits:\n%s", body, text)
		}
	})
	if _, err := os.Stat(merged); err != nil {
		t.Fatal(err)
	}
}

// gcovJSONDoc is gcov's JSON intermediate format (gcov --json-format).
type gcovJSONDoc struct {
	FormatVersion string         `json:"format_version"`
	Files         []gcovJSONFile `json:"files"`
}

type gcovJSONFile struct {
	File      string             `json:"file"`
	Functions []gcovJSONFunction `json:"functions"`
	Lines     []gcovJSONLine     `json:"lines"`
}

type gcovJSONFunction struct {
	Name           string `json:"name"`
	DemangledName  string `json:"demangled_name"`
	StartLine      int    `json:"start_line"`
	ExecutionCount int64  `json:"execution_count"`
}

type gcovJSONLine struct {
	LineNumber      int    `json:"line_number"`
	Count           int64  `json:"count"`
	FunctionName    string `json:"function_name"`
	UnexecutedBlock bool   `json:"unexecuted_block"`
}

func readGcovJSON(t testing.TB, path string) *gcovJSONDoc {
	t.Helper()
	var doc gcovJSONDoc
	decodeGcovJSON(t, path, &doc)
	return &doc
}

// decodeGcovJSON decodes the gzip'd JSON document at path (gcov's
// --json-format output) into v.
func decodeGcovJSON(t testing.TB, path string, v any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s is not gzip'd as gcov writes it: %v", path, err)
	}
	if err := json.NewDecoder(zr).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func (d *gcovJSONDoc) file(t testing.TB, base string) *gcovJSONFile {
	t.Helper()
	for i := range d.Files {
		if filepath.Base(d.Files[i].File) == base {
			return &d.Files[i]
		}
	}
	t.Fatalf("no file %s in the gcov JSON", base)
	return nil
}

func (f *gcovJSONFile) line(n int) (gcovJSONLine, bool) {
	for _, l := range f.Lines {
		if l.LineNumber == n {
			return l, true
		}
	}
	return gcovJSONLine{}, false
}

func (f *gcovJSONFile) function(name string) (gcovJSONFunction, bool) {
	for _, fn := range f.Functions {
		if fn.Name == name {
			return fn, true
		}
	}
	return gcovJSONFunction{}, false
}

// TestGcovJSONMatchesGcov runs calls.c under patchprof writing gcov's
// JSON intermediate format directly, and compares it with the JSON real
// gcov writes for the same source built with --coverage: every line both
// reports has the same count (after moving gcov's function entries to the
// opening brace, where DWARF puts them), none of gcov's lines is missing,
// and every function has the same execution count.
func TestGcovJSONMatchesGcov(t *testing.T) {
	needs(t)
	mustHaveGcov(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	dir := t.TempDir()
	gz := filepath.Join(dir, "p.gcov.json.gz")
	if res := run(t, runOpts{args: []string{"--lines", "--funcs", "--format", "gcov-json", "-o", gz, exe}}); res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	got := readGcovJSON(t, gz).file(t, "calls.c")

	// The oracle: gcov --json-format on a --coverage build.
	want := gcovJSON(t, gcovRun{src: "calls.c"})

	// gcov counts a function's entry on the line naming it, gcc's line
	// table on its opening brace: moveFunctionEntries reconciles the two,
	// as for the text oracle.
	wantLines, gotLines := map[int]int64{}, map[int]int64{}
	for _, l := range want.Lines {
		wantLines[l.LineNumber] = l.Count
	}
	for _, l := range got.Lines {
		gotLines[l.LineNumber] = l.Count
	}
	moveFunctionEntries(wantLines, gotLines, sourceLines(t, filepath.Join(testdataDir, "calls.c")))
	both := 0
	for line, w := range wantLines {
		g, ok := gotLines[line]
		if !ok {
			t.Logf("only gcov has calls.c:%d (count %d)", line, w)
			continue
		}
		both++
		if g != w {
			t.Errorf("calls.c:%d: count %d, gcov %d", line, g, w)
		}
	}
	if both < len(wantLines) {
		t.Errorf("only %d of gcov's %d lines are in patchprof's gcov JSON", both, len(wantLines))
	}
	for _, w := range want.Functions {
		g, ok := got.function(w.Name)
		if !ok {
			t.Errorf("function %s missing from patchprof's gcov JSON", w.Name)
			continue
		}
		if g.ExecutionCount != w.ExecutionCount {
			t.Errorf("function %s: execution_count %d, gcov %d", w.Name, g.ExecutionCount, w.ExecutionCount)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
