package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeSaved writes a small saved profile counting lines 2 and 3 of a
// source a.c in dir, and returns the profile's path.
func writeSaved(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "a.c")
	if err := os.WriteFile(src, []byte("int main(void)\n{\n\treturn 0;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(dir, "p.json")
	if err := os.WriteFile(saved, []byte(`{"version": 2, "executable": "/x", "args": ["x"], "mode": "lines",
		"exit": {"code": 0}, "lines": [{"file": "`+src+`", "line": 2, "count": 1}, {"file": "`+src+`", "line": 3, "count": 1}],
		"functions": [], "sites": []}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return saved
}

// captureStdout runs f with os.Stdout sent to a file and returns what f
// wrote there.
func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	tmp, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Close()
	saved := os.Stdout
	os.Stdout = tmp
	defer func() { os.Stdout = saved }()
	f()
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReportToStdout: `patchprof report FILE` writes its listing to
// stdout, so `> out.txt` and `| less` get it; it is the listing -o writes.
func TestReportToStdout(t *testing.T) {
	dir := t.TempDir()
	saved := writeSaved(t, dir)
	out := filepath.Join(dir, "r.txt")
	var b strings.Builder
	if code := Main([]string{"report", "-o", out, saved}, &b); code != 0 {
		t.Fatalf("report -o: exit %d: %s", code, b.String())
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var code int
	b.Reset()
	got := captureStdout(t, func() { code = Main([]string{"report", saved}, &b) })
	if code != 0 || b.String() != "" {
		t.Errorf("report: exit %d, stderr %q; want 0 and nothing", code, b.String())
	}
	if got != string(want) || !strings.Contains(got, "      1: {\n") {
		t.Errorf("report on stdout:\n%s\nwant the listing -o wrote:\n%s", got, want)
	}
}

// TestFlagsAfterFiles: report and merge take their flags after the file
// names too; after "--" every argument is a file name.
func TestFlagsAfterFiles(t *testing.T) {
	dir := t.TempDir()
	saved := writeSaved(t, dir)
	all := filepath.Join(dir, "all.json")
	var b strings.Builder
	if code := Main([]string{"merge", saved, saved, "-o", all}, &b); code != 0 {
		t.Fatalf("merge a b -o all: exit %d: %s", code, b.String())
	}
	text, err := os.ReadFile(all)
	if err != nil || !strings.Contains(string(text), `"count": 2`) {
		t.Fatalf("merged profile (%v):\n%s\nwant line counts of 2", err, text)
	}
	out := filepath.Join(dir, "r.txt")
	if code := Main([]string{"report", all, "--print", "scaled", "-o", out}, &b); code != 0 {
		t.Fatalf("report FILE --print scaled -o r.txt: exit %d: %s", code, b.String())
	}
	if text, err := os.ReadFile(out); err != nil || !strings.Contains(string(text), "a.c") {
		t.Errorf("report FILE -o r.txt wrote (%v):\n%s", err, text)
	}
	b.Reset()
	code := Main([]string{"report", "-o", out, "--", "-o"}, &b)
	if want := "patchprof: load profile: stat -o: no such file or directory\n"; code != exitFailure || b.String() != want {
		t.Errorf("report -o r.txt -- -o: exit %d, printed %q; want %d and %q", code, b.String(), exitFailure, want)
	}
	for _, tc := range []struct{ in, want []string }{
		{[]string{"a.json", "-o", "x", "b.json"}, []string{"a.json", "b.json"}},
		{[]string{"--", "-o", "x"}, []string{"-o", "x"}},
		{[]string{"-o", "--", "a.json", "--force"}, []string{"a.json"}},
		{[]string{"a.json", "--", "--force"}, []string{"a.json", "--force"}},
	} {
		fs := newMergeFlags()
		got, err := parseInterspersed(fs, tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseInterspersed(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestProgramFlagsNotTaken: the main command stops reading its flags at the
// program name: the program's own -o and --funcs are the program's.
func TestProgramFlagsNotTaken(t *testing.T) {
	f, err := parseFlags([]string{"--lines", "./x", "-o", "y", "--funcs"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"./x", "-o", "y", "--funcs"}; !slices.Equal(f.args, want) || f.run.rf.out != "" || f.cfg.Funcs {
		t.Errorf("args %q, -o %q, funcs %v; want %q, no -o, no --funcs", f.args, f.run.rf.out, f.cfg.Funcs, want)
	}
}

// TestReportGcovSaysWhat: `report --format gcov` without -o writes into the
// working directory and says which files it wrote there.
func TestReportGcovSaysWhat(t *testing.T) {
	dir := t.TempDir()
	saved := writeSaved(t, dir)
	t.Chdir(dir)
	var b strings.Builder
	if code := Main([]string{"report", "--format", "gcov", saved}, &b); code != 0 {
		t.Fatalf("report --format gcov: exit %d: %s", code, b.String())
	}
	if want := "patchprof: wrote a.c.gcov\n"; b.String() != want {
		t.Errorf("report --format gcov printed %q, want %q", b.String(), want)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.c.gcov")); err != nil {
		t.Error(err)
	}
	b.Reset()
	gdir := filepath.Join(dir, "g")
	if code := Main([]string{"report", "--format", "gcov", "-o", gdir, saved}, &b); code != 0 || b.String() != "" {
		t.Errorf("report --format gcov -o DIR: exit %d, printed %q; want 0 and nothing", code, b.String())
	}
}
