package output

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

// hugeLines is a crafted profile (issue 12): a line at 10^9 in a source of
// 4 lines, and one at 2^31-1 in a source that does not exist.
func hugeLines() *profile.Profile {
	return &profile.Profile{
		Version: profile.Version, Executable: dir + "/x", Args: []string{"./x"}, Mode: profile.ModeLinesFuncs,
		Exit: profile.Exit{Code: intp(0)},
		Lines: []profile.Line{
			{File: dir + "/short.c", Line: 3, Count: 1},
			{File: dir + "/short.c", Line: 1000000000, Count: 2},
			{File: dir + "/gone.c", Line: 1<<31 - 1, Count: 3},
		},
		Functions: []profile.Function{{Name: "f", Count: 1, File: dir + "/short.c", Line: 999999999, Address: 0x10}},
	}
}

// TestHugeLineNumbers: what a report writes is bounded by the source and
// the profile, not by its line numbers (a line at 10^9 made `report
// --format gcov` write 2.3 GB), and a line past the source's end is said.
func TestHugeLineNumbers(t *testing.T) {
	p := hugeLines()
	fsys := newFakeFS(t)
	out := t.TempDir()
	if _, err := WriteGcov(out, p, fsys.ReadFile); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"short.c.gcov": `        -:    0:Source:/home/ann/prog/short.c
        -:    0:Graph:
        -:    0:Data:
        -:    0:Runs:1
        -:    1:int f(void)
        -:    2:{
        1:    3:	return 1;
        -:    4:}
function f called 1 returned 0% blocks executed 0%
        -:999999999:/*EOF*/
        2:1000000000:/*EOF*/
`,
		"gone.c.gcov": `        -:    0:Source:/home/ann/prog/gone.c
        -:    0:Graph:
        -:    0:Data:
        -:    0:Runs:1
        3:2147483647:/*EOF*/
`,
	} {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, want)
		}
	}

	var html bytes.Buffer
	if err := WriteHTML(&html, p, Options{ReadFile: fsys.ReadFile}); err != nil {
		t.Fatal(err)
	}
	if html.Len() > 64<<10 {
		t.Errorf("HTML of 3 counted lines is %d bytes", html.Len())
	}
	for _, want := range []string{
		"/home/ann/prog/short.c has 4 lines but the profile counts line 1000000000: the source has changed since the build",
		"source not found: /home/ann/prog/gone.c (use --source-dir DIR or --subst-path FROM=TO)",
	} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks the note %q", want)
		}
	}

	var listing bytes.Buffer
	if err := Write(&listing, p, Options{ReadFile: fsys.ReadFile, Width: 80}); err != nil {
		t.Fatal(err)
	}
	if listing.Len() > 4<<10 {
		t.Errorf("listing of 3 counted lines is %d bytes:\n%s", listing.Len(), listing.String())
	}
	for _, want := range []string{
		"note: /home/ann/prog/short.c has 4 lines but the profile counts line 1000000000: the source has changed since the build\n",
		"note: source not found: /home/ann/prog/gone.c (use --source-dir DIR or --subst-path FROM=TO)\n",
	} {
		if !strings.Contains(listing.String(), want) {
			t.Errorf("listing lacks %q:\n%s", want, listing.String())
		}
	}
}

// TestControlCharacters: a newline or an escape sequence in a file or
// function name (from a profile or DWARF) neither splits a row nor reaches
// the terminal raw (issue 12, item 16).
func TestControlCharacters(t *testing.T) {
	file := dir + "/evil\n\x1b[2J.c"
	fn := "f\n\x1b]0;owned\a"
	p := &profile.Profile{
		Version: profile.Version, Executable: dir + "/x\x1b[31m", Args: []string{"./x\x1b[31m"}, Mode: profile.ModeLinesFuncs,
		Exit:      profile.Exit{Signal: "SIGSEGV", Function: fn, File: file, Line: 2},
		Lines:     []profile.Line{{File: file, Line: 2, Count: 7}},
		Functions: []profile.Function{{Name: fn, Count: 1, File: file, Line: 1, Address: 0x10}},
		Notes:     []string{"a note\nwith a newline"},
	}
	var lcov bytes.Buffer
	if err := WriteLCOV(&lcov, p); err != nil {
		t.Fatal(err)
	}
	wantLCOV := `TN:
SF:/home/ann/prog/evil\n\x1b[2J.c
FN:1,f\n\x1b]0;owned\a
FNDA:1,f\n\x1b]0;owned\a
FNF:1
FNH:1
DA:2,7
LF:1
LH:1
end_of_record
`
	if lcov.String() != wantLCOV {
		t.Errorf("lcov:\n%s\nwant\n%s", lcov.String(), wantLCOV)
	}
	var listing bytes.Buffer
	if err := Write(&listing, p, Options{ReadFile: newFakeFS(t).ReadFile, Width: 100}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(listing.String(), 0x1b) || strings.ContainsRune(listing.String(), 0x07) {
		t.Errorf("listing has raw control characters:\n%q", listing.String())
	}
	for _, want := range []string{
		`patchprof: ./x\x1b[31m killed by SIGSEGV in f\n\x1b]0;owned\a at /home/ann/prog/evil\n\x1b[2J.c:2` + "\n",
		"note: a note\\nwith a newline\n",
		"note: source not found: /home/ann/prog/evil\\n\\x1b[2J.c (use --source-dir DIR or --subst-path FROM=TO)\n",
	} {
		if !strings.Contains(listing.String(), want) {
			t.Errorf("listing lacks %q:\n%s", want, listing.String())
		}
	}
	out := t.TempDir()
	if _, err := WriteGcov(out, p, nil); err != nil {
		t.Fatal(err)
	}
	gcov, err := os.ReadFile(filepath.Join(out, "evil\n\x1b[2J.c.gcov"))
	if err != nil {
		t.Fatal(err)
	}
	wantGcov := `        -:    0:Source:/home/ann/prog/evil\n\x1b[2J.c
        -:    0:Graph:
        -:    0:Data:
        -:    0:Runs:1
function f\n\x1b]0;owned\a called 1 returned 0% blocks executed 0%
        -:    1:/*EOF*/
        7:    2:/*EOF*/
`
	if string(gcov) != wantGcov {
		t.Errorf("gcov:\n%s\nwant\n%s", gcov, wantGcov)
	}
}

// TestExitOutside: a target killed while in code patchprof did not read
// (SIGTERM in libc's raise) is reported with both places: its PC, outside
// the profiled code, and the call in the program that led there.
func TestExitOutside(t *testing.T) {
	for _, tc := range []struct {
		exit profile.Exit
		want string
	}{
		{profile.Exit{Signal: "SIGTERM", PC: new(profile.Address(0x7f0012345678)), PCOutside: true, Function: "main", File: dir + "/x.c", Line: 12},
			"patchprof: ./x killed by SIGTERM at 0x7f0012345678, outside the profiled code, called from main at x.c:12\n"},
		{profile.Exit{Signal: "SIGTERM", PC: new(profile.Address(0x7f0012345678)), PCOutside: true, File: dir + "/x.c", Line: 12},
			"patchprof: ./x killed by SIGTERM at 0x7f0012345678, outside the profiled code, called from x.c:12\n"},
		{profile.Exit{Signal: "SIGABRT", PC: new(profile.Address(0x7f0012345678)), PCOutside: true},
			"patchprof: ./x killed by SIGABRT at 0x7f0012345678, outside the profiled code\n"},
		{profile.Exit{Signal: "SIGSEGV", FaultAddress: new(profile.Address(0)), PC: new(profile.Address(0x401136)), Function: "f", File: dir + "/x.c", Line: 3},
			"patchprof: ./x killed by SIGSEGV (fault address 0x0) in f at x.c:3\n"},
	} {
		p := &profile.Profile{Version: profile.Version, Executable: dir + "/x", Args: []string{"./x"}, Mode: profile.ModeFuncs,
			Exit: tc.exit, Functions: []profile.Function{{Name: "main", Count: 1, Address: 0x10}}}
		var b bytes.Buffer
		if err := Write(&b, p, Options{Cwd: dir, ReadFile: newFakeFS(t).ReadFile}); err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(b.String(), "\n"); first+"\n" != tc.want {
			t.Errorf("header %q, want %q", first+"\n", tc.want)
		}
	}
}
