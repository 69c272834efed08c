package integration

import (
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
	if _, err := os.Stat(merged); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
