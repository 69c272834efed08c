//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// firstDiff describes the first line where a and b differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			return fmt.Sprintf("line %d:\n  live:   %q\n  report: %q", i+1, x, y)
		}
	}
	return "no difference"
}

// TestReportRoundTrip checks that `patchprof report` renders a saved
// profile exactly as the live run rendered it, in each print format, for a
// clean exit and for a crash.
func TestReportRoundTrip(t *testing.T) {
	needs(t)
	calls := buildC(t, "calls.c", "-g", "-O0")
	crash := buildC(t, "crash.c", "-g", "-O0")
	for _, tc := range []struct {
		name  string
		print string
		code  int
		prog  []string
	}{
		{"counts", "counts", 0, []string{calls}},
		{"histogram", "histogram", 0, []string{calls}},
		{"scaled", "scaled", 0, []string{calls}},
		{"default", "", 0, []string{calls}},
		{"crash", "counts", 139, []string{crash, "segv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			save := filepath.Join(dir, "p.json")
			live := filepath.Join(dir, "live.txt")
			again := filepath.Join(dir, "report.txt")
			var printFlag []string
			if tc.print != "" {
				printFlag = []string{"--print", tc.print}
			}
			args := append([]string{"--lines", "--funcs", "--save", save, "-o", live}, printFlag...)
			res := run(t, runOpts{args: append(args, tc.prog...)})
			if res.code != tc.code {
				t.Fatalf("%s: exit code %d, want %d\n%s", res.cmdline, res.code, tc.code, tail(res.stderr))
			}
			rep := run(t, runOpts{args: append(append([]string{"report", "-o", again}, printFlag...), save)})
			if rep.code != 0 {
				t.Errorf("%s: exit code %d, want 0\n%s", rep.cmdline, rep.code, tail(rep.stderr))
			}
			if rep.stderr != "" || rep.stdout != "" {
				t.Errorf("%s: -o given, yet output on stdout %q / stderr %q", rep.cmdline, rep.stdout, rep.stderr)
			}
			a, b := readFile(t, live), readFile(t, again)
			if a == "" {
				t.Fatalf("%s: empty report", res.cmdline)
			}
			if a != b {
				t.Errorf("report of the saved profile differs from the live one at %s", firstDiff(a, b))
			}
		})
	}
}

// TestReportToStdout checks that report without -o writes the listing to
// stdout (so `> out.txt` and `| less` get it), the same listing the live
// run wrote with -o, and nothing to stderr.
func TestReportToStdout(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	dir := t.TempDir()
	save, live := filepath.Join(dir, "p.json"), filepath.Join(dir, "live.txt")
	res := run(t, runOpts{args: []string{"--funcs", "--save", save, "-o", live, exe}})
	if res.code != 0 {
		t.Fatalf("%s: exit code %d\n%s", res.cmdline, res.code, tail(res.stderr))
	}
	rep := run(t, runOpts{args: []string{"report", save}})
	if rep.code != 0 || rep.stderr != "" {
		t.Errorf("%s: exit code %d, stderr %q; want 0 and nothing", rep.cmdline, rep.code, rep.stderr)
	}
	if want := readFile(t, live); rep.stdout != want {
		t.Errorf("%s: stdout differs from the live report at %s", rep.cmdline, firstDiff(want, rep.stdout))
	}
	// Flags after the file name are report's own.
	again := filepath.Join(dir, "again.txt")
	rep = run(t, runOpts{args: []string{"report", save, "-o", again}})
	if rep.code != 0 || rep.stdout != "" || readFile(t, again) != readFile(t, live) {
		t.Errorf("%s: exit code %d, stdout %q; want 0, nothing, and the live report in %s", rep.cmdline, rep.code, rep.stdout, again)
	}
}

// TestPrintFormats checks that the three formats are distinct renderings
// of the same counts.
func TestPrintFormats(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	dir := t.TempDir()
	save := filepath.Join(dir, "p.json")
	res := run(t, runOpts{args: []string{"--lines", "--save", save, "-o", filepath.Join(dir, "live.txt"), exe}})
	if res.code != 0 {
		t.Fatalf("%s: exit code %d\n%s", res.cmdline, res.code, tail(res.stderr))
	}
	out := make(map[string]string)
	for _, f := range []string{"counts", "histogram", "scaled"} {
		path := filepath.Join(dir, f+".txt")
		rep := run(t, runOpts{args: []string{"report", "--print", f, "-o", path, save}})
		if rep.code != 0 {
			t.Fatalf("%s: exit code %d\n%s", rep.cmdline, rep.code, tail(rep.stderr))
		}
		out[f] = readFile(t, path)
	}
	if !strings.Contains(out["counts"], "work(int x)") {
		t.Errorf("--print counts: the listing has no source text of calls.c:\n%s", tail(out["counts"]))
	}
	if out["counts"] != readFile(t, filepath.Join(dir, "live.txt")) {
		t.Errorf("--print counts differs from the default format")
	}
	if out["histogram"] == out["counts"] || out["scaled"] == out["counts"] || out["histogram"] == out["scaled"] {
		t.Errorf("the three print formats are not all different")
	}
}

// TestMissingSources builds from a copy of the source, deletes it, and
// checks that the listing still has the counts and a note naming
// --source-dir; with --source-dir (live or in report) or --subst-path
// the source text comes back.
func TestMissingSources(t *testing.T) {
	needs(t)
	t.Parallel()
	gone := filepath.Join(t.TempDir(), "src")
	found := filepath.Join(t.TempDir(), "found")
	for _, d := range []string{gone, found} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	text, err := os.ReadFile(filepath.Join(testdataDir, "calls.c"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, found, "calls.c", text, 0o644)
	src := writeFile(t, gone, "calls.c", text, 0o644)
	exe := buildCFrom(t, src, "-g", "-O0")
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	body := markerLine(t, "calls.c", "WORK_BODY")
	bodyText := "int y = x * 3;"

	dir := t.TempDir()
	save := filepath.Join(dir, "p.json")
	check := func(what, report string, wantText bool) {
		t.Helper()
		l, ok := findListing(parseListing(report), "calls.c", body)
		if !ok {
			t.Errorf("%s: no listing line for calls.c:%d; report:\n%s", what, body, tail(report))
			return
		}
		if l.Count != "1000" {
			t.Errorf("%s: calls.c:%d counted %q, want 1000", what, body, l.Count)
		}
		hasNote := false
		for _, line := range strings.Split(report, "\n") {
			if strings.HasPrefix(line, "note: ") && strings.Contains(line, "--source-dir") {
				hasNote = true
			}
		}
		if wantText {
			if !strings.Contains(l.Source, bodyText) {
				t.Errorf("%s: calls.c:%d text %q, want %q", what, body, l.Source, bodyText)
			}
			if hasNote {
				t.Errorf("%s: source found, yet a note still says to use --source-dir:\n%s", what, tail(report))
			}
		} else if !hasNote {
			t.Errorf("%s: source missing, but no `note: ...` mentioning --source-dir:\n%s", what, tail(report))
		}
	}

	out := filepath.Join(dir, "missing.txt")
	res := run(t, runOpts{args: []string{"--lines", "--save", save, "-o", out, exe}})
	if res.code != 0 {
		t.Fatalf("%s: exit code %d\n%s", res.cmdline, res.code, tail(res.stderr))
	}
	check("source deleted", readFile(t, out), false)

	out = filepath.Join(dir, "sourcedir.txt")
	res = run(t, runOpts{args: []string{"--lines", "--source-dir", found, "-o", out, exe}})
	if res.code != 0 {
		t.Fatalf("%s: exit code %d\n%s", res.cmdline, res.code, tail(res.stderr))
	}
	check("--source-dir", readFile(t, out), true)

	out = filepath.Join(dir, "subst.txt")
	res = run(t, runOpts{args: []string{"--lines", "--subst-path", gone + "=" + found, "-o", out, exe}})
	if res.code != 0 {
		t.Fatalf("%s: exit code %d\n%s", res.cmdline, res.code, tail(res.stderr))
	}
	check("--subst-path", readFile(t, out), true)

	out = filepath.Join(dir, "report.txt")
	rep := run(t, runOpts{args: []string{"report", "--source-dir", found, "-o", out, save}})
	if rep.code != 0 {
		t.Fatalf("%s: exit code %d\n%s", rep.cmdline, rep.code, tail(rep.stderr))
	}
	check("report --source-dir", readFile(t, out), true)
}
