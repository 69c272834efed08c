//go:build linux

package integration

import (
	"crypto/md5"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestStaleSourceMD5: a DWARF 5 line table that records a source's MD5
// (gcc 12 writes none, so the test adds it to gcc's assembly, as clang
// writes it: `.file N "dir" "name" md5 0x...`) decides whether the source
// changed, whatever its modification time: a source edited and dated back
// before the build gets one note naming it, with the counts still listed;
// one touched after the build but unchanged gets none.
func TestStaleSourceMD5(t *testing.T) {
	needs(t)
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "digest.c")
	text := "int main(void)\n{\n\treturn 0;\n}\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	gccIn(t, dir, "gcc", "-g", "-gdwarf-5", "-O0", "-S", "-o", "digest.s", "digest.c")
	asm, err := os.ReadFile(filepath.Join(dir, "digest.s"))
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum([]byte(text))
	fileDirective := regexp.MustCompile(`(?m)^(\s*\.file\s+\d+\s+(?:"[^"]*"\s+)?"digest\.c")\s*$`)
	if len(fileDirective.FindAll(asm, -1)) == 0 {
		t.Fatalf("no .file directive naming digest.c in gcc's assembly:\n%s", asm)
	}
	asm = fileDirective.ReplaceAll(asm, []byte("${1} md5 0x"+hex.EncodeToString(sum[:])))
	if err := os.WriteFile(filepath.Join(dir, "digest.s"), asm, 0o644); err != nil {
		t.Fatal(err)
	}
	gccIn(t, dir, "gcc", "-o", "digest", "digest.s")
	exe := filepath.Join(dir, "digest")
	// GNU as stores the digest as a little-endian number (its bytes
	// reversed), which readelf prints back as given; patchprof takes
	// either order.
	if out, err := exec.Command("readelf", "--debug-dump=rawline", exe).CombinedOutput(); err == nil && !strings.Contains(string(out), hex.EncodeToString(sum[:])) {
		t.Fatalf("the line table records no MD5 of digest.c:\n%s", out)
	}
	note := "note: source file " + src + " differs from the one " + exe + " was built from (its DWARF MD5)"
	for _, tc := range []struct {
		name    string
		text    string    // the source's new contents, "" to keep it
		mtime   time.Time // the source's modification time
		notes   int
		listing string
	}{
		{"touched after the build, unchanged", "", time.Now().Add(time.Hour), 0, "return 0;"},
		{"edited, dated before the build", "/* a line more */\n" + text, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), 1, "/* a line more */"},
	} {
		if tc.text != "" {
			if err := os.WriteFile(src, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(src, tc.mtime, tc.mtime); err != nil {
			t.Fatal(err)
		}
		res := run(t, runOpts{args: []string{"--lines", exe}})
		wantExitCode(t, res, nil, 0)
		if got := strings.Count(res.stderr, note); got != tc.notes {
			t.Errorf("%s: %d notes %q, want %d, in:\n%s", tc.name, got, note, tc.notes, tail(res.stderr))
		}
		if strings.Contains(res.stderr, "is newer than") {
			t.Errorf("%s: the modification time was trusted over the MD5:\n%s", tc.name, tail(res.stderr))
		}
		if !strings.Contains(res.stderr, tc.listing) || !regexp.MustCompile(`digest\.c\s+\d+\s+1:`).MatchString(res.stderr) {
			t.Errorf("%s: the listing lacks the source or the counts:\n%s", tc.name, tail(res.stderr))
		}
	}
}
