package output

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

// foldSource is a file with a long stretch that never ran: g (lines 1-4)
// is never called and lines 5-20 are comments.
var foldSource = func() string {
	var b strings.Builder
	b.WriteString("int g(int x)\n{\n\treturn x;\n}\n")
	for i := 1; i <= 16; i++ {
		b.WriteString("/* comment " + strconv.Itoa(i) + " */\n")
	}
	b.WriteString("int main(void)\n{\n\tif (g(0))\n\t\treturn 1;\n\treturn 0;\n}\n")
	return b.String()
}()

func foldProfile() *profile.Profile {
	f := dir + "/fold.c"
	p := &profile.Profile{Version: profile.Version, Executable: dir + "/fold", Args: []string{"./fold"},
		Mode: profile.ModeLines, Exit: profile.Exit{Code: intp(0)}}
	for line, c := range map[int]uint64{2: 0, 3: 0, 4: 0, 22: 1, 23: 1, 24: 0, 25: 1, 26: 1} {
		p.Lines = append(p.Lines, profile.Line{File: f, Line: line, Count: c})
	}
	return p
}

// TestTerminalGolden covers the terminal options (colour, folding, --top,
// demangled names) and the per-module sections.
func TestTerminalGolden(t *testing.T) {
	mangled := &profile.Profile{
		Version: profile.Version, Executable: "/usr/bin/mixed", Args: []string{"mixed"},
		Mode: profile.ModeFuncs, Exit: profile.Exit{Signal: "SIGABRT", Function: "_ZN5shape4areaEv"},
		Functions: []profile.Function{
			{Name: "_ZN9namespace5Klass25a_rather_long_method_nameINS_6ThingyEEEvRKT_", Count: 7, Address: 0x1300},
			{Name: "_Z3addii", Count: 12, Address: 0x1100},
			{Name: "_ZN4core3fmt5write17h0123456789abcdefE", Count: 3, Address: 0x1400},
			{Name: "_RNvCs1234_7mycrate3foo", Count: 3, Address: 0x1500},
			{Name: "main.(*Server).Run", Count: 1, Address: 0x1600},
			{Name: "_Zbroken", Count: 1, Address: 0x1700},
			{Name: "_ZN5shape4areaEv", Count: 1, Address: 0x1800},
		},
	}
	crashMods := twoModules()
	crashMods.Exit = profile.Exit{Signal: "SIGSEGV", FaultAddress: new(profile.Address(0x0)), File: dir + "/b.c", Line: 3}
	funcsMods := twoModules()
	funcsMods.Mode, funcsMods.Lines = profile.ModeFuncs, []profile.Line{}
	emptyMod := twoModules()
	emptyMod.Modules = append(emptyMod.Modules, profile.Module{Path: "/lib/libnothing.so", Kind: profile.ModuleLibrary})
	execd := twoModules()
	execd.Modules = append(execd.Modules, profile.Module{Path: dir + "/helper", Kind: profile.ModuleExecutable})
	execd.Lines = append(execd.Lines, profile.Line{File: dir + "/a.c", Line: 5, Count: 9, Module: dir + "/helper"})

	for _, tc := range []struct {
		name string
		p    *profile.Profile
		opt  Options
	}{
		{"fold", foldProfile(), Options{Cwd: dir, Fold: true}},
		{"fold_off", foldProfile(), Options{Cwd: dir}},
		{"color", crashProfile(), Options{Cwd: dir, Color: true}},
		{"color_histogram", bishop(), Options{Cwd: dir, Color: true, Style: Histogram}},
		{"top", crashProfile(), Options{Cwd: dir, Top: 2}},
		{"top_large", bishop(), Options{Cwd: dir, Top: 100}},
		{"demangle", mangled, Options{}},
		{"modules", twoModules(), Options{Cwd: dir}},
		{"modules_crash", crashMods, Options{Cwd: dir, Color: true}},
		{"modules_funcs", funcsMods, Options{Cwd: dir}},
		{"modules_empty", emptyMod, Options{Cwd: dir}},
		{"modules_exec", execd, Options{Cwd: dir, Top: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ffs := newFakeFS(t)
			ffs.files[dir+"/fold.c"] = "=" + foldSource
			ffs.files[dir+"/a.c"] = "=" + exportSources["a.c"]
			ffs.files[dir+"/b.c"] = "=" + exportSources["b.c"]
			tc.opt.ReadFile = ffs.ReadFile
			var buf bytes.Buffer
			if err := Write(&buf, tc.p, tc.opt); err != nil {
				t.Fatal(err)
			}
			for i, l := range strings.Split(buf.String(), "\n") {
				if strings.TrimRight(l, " \t") != l {
					t.Errorf("line %d has trailing blanks: %q", i+1, l)
				}
			}
			checkGolden(t, "terminal/"+tc.name+".golden", buf.String())
		})
	}
}

// TestModulesOff checks that a profile whose modules list is empty renders
// exactly as the same profile without any module fields: the per-module
// layout appears only when the profile has modules.
func TestModulesOff(t *testing.T) {
	p := twoModules()
	p.Modules = nil
	for i := range p.Lines {
		p.Lines[i].Module = ""
	}
	for i := range p.Functions {
		p.Functions[i].Module = ""
	}
	ffs := newFakeFS(t)
	ffs.files[dir+"/a.c"] = "=" + exportSources["a.c"]
	ffs.files[dir+"/b.c"] = "=" + exportSources["b.c"]
	var buf bytes.Buffer
	if err := Write(&buf, p, Options{Cwd: dir, ReadFile: ffs.ReadFile}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "MODULE") {
		t.Errorf("a profile without modules has module sections:\n%s", buf.String())
	}
	// Without modules, the two copies of b.c's lines add up, as before.
	if !strings.Contains(buf.String(), "b.c      1        2: int unused(void)") {
		t.Errorf("b.c:1 is not summed to 2:\n%s", buf.String())
	}
}

func TestHeat(t *testing.T) {
	for _, tc := range []struct {
		count, max uint64
		want       string
	}{
		{0, 10, sgrNever},
		{1, 1, "1;31"},
		{1, 1000, "34"},
		{10, 1000, "36"},    // log 10 / log 1000 = 1/3
		{100, 1000, "33"},   // 2/3
		{999, 1000, "1;31"}, // 0.9999
		{1000, 1000, "1;31"},
		{5, 3, "1;31"}, // above the maximum (not possible, but safe)
	} {
		if got := heat(tc.count, tc.max); got != tc.want {
			t.Errorf("heat(%d, %d) = %q, want %q", tc.count, tc.max, got, tc.want)
		}
	}
}
