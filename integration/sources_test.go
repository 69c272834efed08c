//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestSourceNotRegular: a source path that is a FIFO, a symlink to
// /dev/zero or a file over 64 MiB is not read (a FIFO blocked patchprof
// after the target's end; /dev/zero grew its memory without bound). The
// run ends at once, its lines are listed without text, and a note says
// why; so does `patchprof report` and the HTML export.
func TestSourceNotRegular(t *testing.T) {
	needs(t)
	for _, tc := range []struct {
		name    string
		replace func(t *testing.T, src string)
		note    string // after "note: source SRC is "
	}{
		{"fifo", func(t *testing.T, src string) {
			if err := syscall.Mkfifo(src, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file (a FIFO): not read"},
		{"dev-zero", func(t *testing.T, src string) {
			if err := os.Symlink("/dev/zero", src); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file (a character device): not read"},
		{"huge", func(t *testing.T, src string) {
			f, err := os.Create(src)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(64<<20 + 1); err != nil { // sparse: no disk used
				t.Fatal(err)
			}
		}, "larger than 64 MiB: listed without its text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "tiny.c")
			if err := os.WriteFile(src, []byte("int main(void)\n{\n\treturn 0;\n}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			exe := buildCFrom(t, src, "-g", "-O0")
			if err := os.Remove(src); err != nil {
				t.Fatal(err)
			}
			tc.replace(t, src)
			note := "note: source " + src + " is " + tc.note + "\n"
			save := filepath.Join(dir, "p.json")
			res := run(t, runOpts{args: []string{"--lines", "--save", save, exe}})
			if res.code != 0 || !strings.Contains(res.stderr, note) {
				t.Errorf("want exit 0 and %q\n%s", note, res)
			}
			for _, row := range []*regexp.Regexp{regexp.MustCompile(`(?m)/tiny\.c +1 +1:$`), regexp.MustCompile(`(?m)/tiny\.c +3 +1:$`)} {
				if !row.MatchString(res.stderr) {
					t.Errorf("listing lacks the row %v without text\n%s", row, res)
				}
			}
			rep := run(t, runOpts{args: []string{"report", save}})
			if rep.code != 0 || !strings.Contains(rep.stdout, note) {
				t.Errorf("report: want exit 0 and %q in the listing on stdout\n%s", note, rep)
			}
			html := filepath.Join(dir, "r.html")
			rep = run(t, runOpts{args: []string{"report", "--format", "html", "-o", html, save}})
			b, _ := os.ReadFile(html)
			if rep.code != 0 || !strings.Contains(string(b), `<p class="note">`+strings.TrimSuffix(note, "\n")+`</p>`) {
				t.Errorf("report --format html: want exit 0 and the note in the page\n%s", rep)
			}
		})
	}
}
