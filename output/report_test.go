package output

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

const dir = "/home/ann/prog"

// fakeFS serves the synthetic sources in testdata/src under dir, plus any
// extra files, and records what was asked for.
type fakeFS struct {
	t     *testing.T
	files map[string]string // absolute name -> testdata file or literal "=content"
	asked []string
}

func newFakeFS(t *testing.T) *fakeFS {
	return &fakeFS{t: t, files: map[string]string{
		dir + "/x.c":     "src/x.c",
		dir + "/crash.c": "src/crash.c",
		dir + "/short.c": "=int f(void)\n{\n\treturn 1;\n}\n",
	}}
}

func (f *fakeFS) ReadFile(name string) ([]byte, error) {
	f.asked = append(f.asked, name)
	src, ok := f.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if s, ok := strings.CutPrefix(src, "="); ok {
		return []byte(s), nil
	}
	b, err := os.ReadFile(filepath.Join("testdata", src))
	if err != nil {
		f.t.Fatal(err)
	}
	return b, nil
}

func intp(n int) *int { return &n }

// bishop is Bishop's shell-sort example from the 1987 paper, counted the
// way patchprof counts (lines without code have no entry).
func bishop() *profile.Profile {
	counts := map[int]uint64{4: 1, 9: 1, 10: 100, 12: 1, 13: 1, 17: 1, 20: 1, 21: 6, 22: 503, 23: 386, 24: 386, 25: 386, 28: 1}
	p := &profile.Profile{
		Version:    profile.Version,
		Executable: dir + "/x",
		Args:       []string{"./x"},
		Mode:       profile.ModeLines,
		Exit:       profile.Exit{Code: intp(0)},
	}
	for l, c := range counts { // map order: Write must sort
		p.Lines = append(p.Lines, profile.Line{File: dir + "/x.c", Line: l, Count: c})
	}
	p.Lines = append(p.Lines, profile.Line{File: dir + "/x.c", Line: 16, Count: 0})
	return p
}

// pinned is p with PinnedNote, as a run with --pin saves it.
func pinned(p *profile.Profile) *profile.Profile {
	p.Notes = append(p.Notes, PinnedNote)
	return p
}

func crashProfile() *profile.Profile {
	return &profile.Profile{
		Version:    profile.Version,
		Executable: dir + "/crash",
		Args:       []string{"./crash", "7"},
		Mode:       profile.ModeLinesFuncs,
		Exit: profile.Exit{Signal: "SIGSEGV", FaultAddress: new(profile.Address(0x0)), PC: new(profile.Address(0x401136)),
			Function: "div0", File: dir + "/crash.c", Line: 7},
		Lines: []profile.Line{
			{File: dir + "/crash.c", Line: 5, Count: 1},
			{File: dir + "/crash.c", Line: 6, Count: 1},
			{File: dir + "/crash.c", Line: 7, Count: 1},
			{File: dir + "/crash.c", Line: 8, Count: 0},
			{File: dir + "/crash.c", Line: 12, Count: 3},
			{File: dir + "/crash.c", Line: 13, Count: 3},
			{File: dir + "/crash.c", Line: 14, Count: 1},
			{File: dir + "/crash.c", Line: 15, Count: 2},
			{File: dir + "/crash.c", Line: 16, Count: 2},
		},
		Functions: []profile.Function{
			{Name: "div0", Count: 1, File: dir + "/crash.c", Line: 4, Address: 0x401126},
			{Name: "helper", Count: 3, File: dir + "/crash.c", Line: 11, Address: 0x401150},
			{Name: "main", Count: 1, File: "/elsewhere/main.c", Line: 3, Address: 0x401190},
		},
	}
}

func TestGolden(t *testing.T) {
	missing := bishop()
	missing.Lines = append(missing.Lines,
		profile.Line{File: "/build/gone/lib.c", Line: 40, Count: 2},
		profile.Line{File: "/build/gone/lib.c", Line: 3, Count: 0},
		profile.Line{File: dir + "/short.c", Line: 2, Count: 1},
		profile.Line{File: dir + "/short.c", Line: 3, Count: 1},
		profile.Line{File: dir + "/short.c", Line: 9, Count: 1},
	)
	missing.Notes = []string{"2 line-table rows dropped: not an instruction start"}

	funcsOnly := &profile.Profile{
		Version: profile.Version, Executable: "/usr/bin/tool", Args: []string{"tool", "-v"},
		Mode: profile.ModeFuncs, Exit: profile.Exit{Code: intp(3)},
		Functions: []profile.Function{
			{Name: "parse", Count: 1200, Address: 0x1200},
			{Name: "main", Count: 1, Address: 0x1000},
			{Name: "lex", Count: 1200, Address: 0x1100},
			{Name: "_ZN9namespace5Klass22a_rather_long_method_nameINS_6ThingyEEEvRKT_", Count: 7, Address: 0x1300, File: "/usr/src/tool/klass.cc", Line: 88},
			{Name: "unused", Count: 0, Address: 0x1400},
		},
	}

	both := crashProfile()
	both.Exit = profile.Exit{Code: intp(1)}
	both.Notes = []string{"1 line-table row dropped: not an instruction start"}

	huge := bishop()
	huge.Lines = append(huge.Lines, profile.Line{File: dir + "/x.c", Line: 5, Count: 18446744073709551615})

	tests := []struct {
		name string
		p    *profile.Profile
		opt  Options
	}{
		{"counts", bishop(), Options{Cwd: dir}},
		{"counts_absolute", bishop(), Options{}},
		{"histogram", bishop(), Options{Style: Histogram, Cwd: dir}},
		{"histogram_wide", bishop(), Options{Style: Histogram, Cwd: dir, Width: 200}},
		{"scaled", bishop(), Options{Style: Scaled, Cwd: dir}},
		{"scaled_huge", huge, Options{Style: Scaled, Cwd: dir}},
		{"crash", crashProfile(), Options{Cwd: dir}},
		{"crash_histogram", crashProfile(), Options{Style: Histogram, Cwd: "/home/ann/"}},
		{"crash_pinned", pinned(crashProfile()), Options{Cwd: "/home/ann/"}},
		{"missing_source", missing, Options{Cwd: dir}},
		{"funcs_only", funcsOnly, Options{Cwd: "/usr/src"}},
		{"lines_funcs", both, Options{Cwd: dir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ffs := newFakeFS(t)
			tt.opt.ReadFile = ffs.ReadFile
			var buf bytes.Buffer
			if err := Write(&buf, tt.p, tt.opt); err != nil {
				t.Fatalf("Write: %v", err)
			}
			got := buf.String()
			for i, l := range strings.Split(got, "\n") {
				if strings.TrimRight(l, " \t") != l {
					t.Errorf("line %d has trailing blanks: %q", i+1, l)
				}
			}
			golden := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./output -update to create it)", err)
			}
			if d := unifiedDiff(golden, "got", string(want), got); d != "" {
				t.Errorf("output differs from %s (go test ./output -update to accept):\n%s", golden, d)
			}
		})
	}
}

func TestDeterministicAndPure(t *testing.T) {
	p := crashProfile()
	p.Lines[0], p.Lines[8] = p.Lines[8], p.Lines[0]
	orig := crashProfile()
	orig.Lines[0], orig.Lines[8] = orig.Lines[8], orig.Lines[0]
	var first string
	for i := range 3 {
		var buf bytes.Buffer
		opt := Options{Style: Scaled, ReadFile: newFakeFS(t).ReadFile}
		if err := Write(&buf, p, opt); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = buf.String()
		} else if buf.String() != first {
			t.Fatalf("run %d differs:\n%s", i, unifiedDiff("first", "again", first, buf.String()))
		}
	}
	if !reflect.DeepEqual(p, orig) {
		t.Error("Write modified the profile")
	}
}

func TestSourceSearch(t *testing.T) {
	p := &profile.Profile{
		Version: profile.Version, Executable: "/x", Mode: profile.ModeLines, Exit: profile.Exit{Code: intp(0)},
		Lines: []profile.Line{{File: "/build/proj/src/a.c", Line: 1, Count: 1}},
	}
	ffs := newFakeFS(t)
	opt := Options{
		ReadFile:   ffs.ReadFile,
		Subst:      []Subst{{From: "/buil", To: "/no"}, {From: "/build/proj", To: "/home/ann/proj"}, {From: "/build", To: "/never"}},
		SourceDirs: []string{"/s1", "/s2"},
	}
	if err := Write(new(bytes.Buffer), p, opt); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/home/ann/proj/src/a.c",
		"/s1/home/ann/proj/src/a.c", "/s1/a.c",
		"/s2/home/ann/proj/src/a.c", "/s2/a.c",
	}
	if !reflect.DeepEqual(ffs.asked, want) {
		t.Errorf("tried %q\nwant  %q", ffs.asked, want)
	}

	// The first hit wins.
	ffs = newFakeFS(t)
	ffs.files["/s2/a.c"] = "=int a;\n"
	ffs.files["/s2/home/ann/proj/src/a.c"] = "=int b;\n"
	opt.ReadFile = ffs.ReadFile
	var buf bytes.Buffer
	if err := Write(&buf, p, opt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "int b;") || strings.Contains(buf.String(), "note: source not found") {
		t.Errorf("wrong source chosen:\n%s", buf.String())
	}
}

func TestSubst(t *testing.T) {
	tests := []struct {
		in, from, to, want string
		ok                 bool
	}{
		{"/build/a.c", "/build", "/src", "/src/a.c", true},
		{"/build/a.c", "/build/", "/src/", "/src/a.c", true},
		{"/build", "/build", "/src", "/src", true},
		{"/buildx/a.c", "/build", "/src", "/buildx/a.c", false},
		{"/other/a.c", "/build", "/src", "/other/a.c", false},
	}
	for _, tt := range tests {
		got, ok := Subst{tt.from, tt.to}.apply(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Subst{%q,%q}.apply(%q) = %q, %v; want %q, %v", tt.from, tt.to, tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseSubst(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Subst
	}{
		{"/a=/b", Subst{"/a", "/b"}},
		{"/a=", Subst{"/a", ""}},
		{"/a=/b=c", Subst{"/a", "/b=c"}},
	} {
		got, err := ParseSubst(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSubst(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "/a", "=/b", "="} {
		if _, err := ParseSubst(in); !errors.Is(err, ErrBadSubst) {
			t.Errorf("ParseSubst(%q) error = %v, want ErrBadSubst", in, err)
		}
	}
}

func TestParseStyle(t *testing.T) {
	for _, s := range []Style{Counts, Histogram, Scaled} {
		got, err := ParseStyle(s.String())
		if err != nil || got != s {
			t.Errorf("ParseStyle(%q) = %v, %v", s.String(), got, err)
		}
	}
	for _, in := range []string{"", "Counts", "hist", "full"} {
		if _, err := ParseStyle(in); !errors.Is(err, ErrUnknownStyle) {
			t.Errorf("ParseStyle(%q) error = %v, want ErrUnknownStyle", in, err)
		}
	}
}

type failWriter struct{}

var errWrite = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestWriteErrors(t *testing.T) {
	opt := Options{ReadFile: newFakeFS(t).ReadFile}
	if err := Write(new(bytes.Buffer), nil, opt); !errors.Is(err, ErrNilProfile) {
		t.Errorf("Write(nil) = %v", err)
	}
	if err := Write(new(bytes.Buffer), bishop(), Options{Style: Style(9)}); !errors.Is(err, ErrUnknownStyle) {
		t.Errorf("Write(Style(9)) = %v", err)
	}
	if err := Write(failWriter{}, bishop(), opt); !errors.Is(err, errWrite) {
		t.Errorf("Write(failing writer) = %v", err)
	}
}

// TestOddProfiles feeds profiles Load would reject (Write gets them from
// code too) and checks Write copes without panicking.
func TestOddProfiles(t *testing.T) {
	for name, p := range map[string]*profile.Profile{
		"empty":         {},
		"unknown exit":  {Mode: profile.ModeLinesFuncs, Args: []string{""}, Executable: "/x"},
		"line 0":        {Mode: profile.ModeLines, Lines: []profile.Line{{File: "/a.c", Line: 0, Count: 1}, {File: "/a.c", Line: -4}}},
		"duplicates":    {Mode: profile.ModeLines, Lines: []profile.Line{{File: dir + "/x.c", Line: 3, Count: 1}, {File: dir + "/x.c", Line: 3, Count: 2}}},
		"huge line":     {Mode: profile.ModeLines, Lines: []profile.Line{{File: dir + "/x.c", Line: 1 << 40, Count: 1}}},
		"crash no file": {Mode: profile.ModeLines, Exit: profile.Exit{Signal: "SIGKILL"}},
		"empty file":    {Mode: profile.ModeLines, Lines: []profile.Line{{File: "", Line: 1, Count: 1}}},
	} {
		var buf bytes.Buffer
		if err := Write(&buf, p, Options{ReadFile: newFakeFS(t).ReadFile, Width: -5}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if name == "duplicates" && !strings.Contains(buf.String(), "      3:") {
			t.Errorf("duplicates: counts not added:\n%s", buf.String())
		}
	}
}

func TestScaledRounding(t *testing.T) {
	tests := []struct {
		count, max  uint64
		width, want int
	}{
		{1, 1, 30, 30},
		{1, 1000, 30, 1},
		{15, 30, 30, 15},
		{1, 60, 30, 1}, // 0.5 rounds up
		{1, 61, 30, 1}, // < 0.5, but nonzero counts get one
		{1<<64 - 1, 1<<64 - 1, 30, 30},
		{1 << 63, 1<<64 - 1, 30, 15},
	}
	for _, tt := range tests {
		if got := scaled(tt.count, tt.max, tt.width); got != tt.want {
			t.Errorf("scaled(%d, %d, %d) = %d, want %d", tt.count, tt.max, tt.width, got, tt.want)
		}
	}
}

func TestExpandTabs(t *testing.T) {
	for in, want := range map[string]string{
		"":           "",
		"\tx":        "        x",
		"ab\tx":      "ab      x",
		"12345678\t": "12345678        ",
		"é\tx":       "é       x",
	} {
		if got := expandTabs(in); got != want {
			t.Errorf("expandTabs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnifiedDiff(t *testing.T) {
	if d := unifiedDiff("a", "b", "x\ny\n", "x\ny\n"); d != "" {
		t.Errorf("equal inputs gave a diff:\n%s", d)
	}
	want := "--- want\n+++ got\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	if d := unifiedDiff("want", "got", "a\nb\nc\n", "a\nB\nc\n"); d != want {
		t.Errorf("diff =\n%s\nwant\n%s", d, want)
	}
}

func TestHeader(t *testing.T) {
	tests := []struct {
		p    profile.Profile
		want string
	}{
		{profile.Profile{Executable: "/bin/true", Exit: profile.Exit{Code: intp(0)}},
			"patchprof: /bin/true exited with code 0"},
		{profile.Profile{Executable: "/bin/x", Args: []string{"x"}, Exit: profile.Exit{Signal: "SIGKILL"}},
			"patchprof: x killed by SIGKILL"},
		{profile.Profile{Args: []string{"./x"}, Exit: profile.Exit{Signal: "SIGBUS", FaultAddress: new(profile.Address(0x7f00)), PC: new(profile.Address(0x10))}},
			"patchprof: ./x killed by SIGBUS (fault address 0x7f00)"},
		{profile.Profile{Args: []string{"./x"}, Exit: profile.Exit{Signal: "SIGABRT", Function: "raise"}},
			"patchprof: ./x killed by SIGABRT in raise"},
		{profile.Profile{Args: []string{"./x"}, Exit: profile.Exit{Signal: "SIGFPE", File: dir + "/d.c"}},
			"patchprof: ./x killed by SIGFPE at d.c"},
		{profile.Profile{Args: []string{"./x"}, Exit: profile.Exit{Signal: "SIGSEGV", FaultAddress: new(profile.Address(0x0)), Function: "f", File: "/abs/crash.c", Line: 12}},
			"patchprof: ./x killed by SIGSEGV (fault address 0x0) in f at /abs/crash.c:12"},
		{profile.Profile{Args: []string{"./x"}},
			"patchprof: ./x ended with unknown status"},
		{profile.Profile{},
			"patchprof: the target ended with unknown status"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := Write(&buf, &tt.p, Options{Cwd: dir}); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSuffix(buf.String(), "\n"); got != tt.want {
			t.Errorf("header = %q\nwant     %q", got, tt.want)
		}
	}
}

// TestDetachedHeader: a detach that left a change of patchprof's in the
// target does not call it unharmed.
func TestDetachedHeader(t *testing.T) {
	for _, c := range []struct {
		exit profile.Exit
		want string
	}{
		{profile.Exit{Detached: true}, "patchprof: /x detached: it runs on, unharmed\n"},
		{profile.Exit{Detached: true, Changed: true}, "patchprof: /x detached: it runs on, but patchprof could not undo all its changes (see the notes)\n"},
	} {
		var buf bytes.Buffer
		p := &profile.Profile{Mode: profile.ModeFuncs, Executable: "/x", Exit: c.exit}
		if err := Write(&buf, p, Options{ReadFile: newFakeFS(t).ReadFile}); err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(buf.String(), "\n"); first+"\n" != c.want {
			t.Errorf("exit %+v: header %q, want %q", c.exit, first, c.want)
		}
	}
}
