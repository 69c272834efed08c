//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCrashOutside: a target that dies in libc (abort raises SIGABRT in
// libc's code, which patchprof did not read) is saved with its libc pc,
// pc_outside, and the program's frame that called abort: main (docs
// profile-format.md, exit); the header names both places.
func TestCrashOutside(t *testing.T) {
	needs(t)
	exe := buildC(t, "crash.c", "-g", "-O0")
	dir := t.TempDir()
	save := filepath.Join(dir, "p.json")
	out := filepath.Join(dir, "report.txt")
	res := run(t, runOpts{args: []string{"--save", save, "--funcs", "-o", out, exe, "abort"}})
	if res.code != 134 {
		t.Fatalf("%s: exit code %d, want 134\n%s", res.cmdline, res.code, tail(res.stderr))
	}
	data, err := os.ReadFile(save)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Exit struct {
			Signal    string `json:"signal"`
			PC        string `json:"pc"`
			PCOutside bool   `json:"pc_outside"`
			Function  string `json:"function"`
			File      string `json:"file"`
			Line      int    `json:"line"`
		} `json:"exit"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	e := doc.Exit
	abortLine := 44 // crash.c: `abort();`
	if e.Signal != "SIGABRT" || !e.PCOutside || !strings.HasPrefix(e.PC, "0x") || e.Function != "main" ||
		filepath.Base(e.File) != "crash.c" || e.Line != abortLine {
		t.Errorf("saved exit %+v; want SIGABRT, pc_outside, in main at crash.c:%d", e, abortLine)
	}
	header, _, _ := strings.Cut(readFile(t, out), "\n")
	if !regexp.MustCompile(`^patchprof: \S+ killed by SIGABRT at 0x[0-9a-f]+, outside the profiled code, called from main at \S*crash\.c:44` + regexp.QuoteMeta(pinned()) + `$`).MatchString(header) {
		t.Errorf("header %q, want the pc outside and the call in main", header)
	}
}
