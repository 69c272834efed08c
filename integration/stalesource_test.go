//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStaleSource: a source changed after the build (newer than the
// executable) gets one note naming it, as gcov warns of a source newer
// than its notes file; the counts are still listed. An untouched source
// gets none.
func TestStaleSource(t *testing.T) {
	needs(t)
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "stale.c")
	exe := filepath.Join(dir, "stale")
	if err := os.WriteFile(src, []byte("int main(void)\n{\n\treturn 0;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-g", "-O0", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	note := "note: source file " + src + " is newer than " + exe
	for _, touched := range []bool{false, true} {
		if touched {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(src, later, later); err != nil {
				t.Fatal(err)
			}
		}
		res := run(t, runOpts{args: []string{"--lines", exe}})
		wantExitCode(t, res, nil, 0)
		if got := strings.Count(res.stderr, note); got != map[bool]int{false: 0, true: 1}[touched] {
			t.Errorf("source touched after the build: %v; %d notes %q in:\n%s", touched, got, note, tail(res.stderr))
		}
		if !strings.Contains(res.stderr, "return 0;") {
			t.Errorf("the listing lacks the source:\n%s", tail(res.stderr))
		}
	}
}
