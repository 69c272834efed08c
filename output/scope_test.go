package output

import (
	"reflect"
	"slices"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

// scopeProfile is a C++ program's profile: its own main.cpp and a vendored
// library, a libstdc++ header, and the C start-up functions.
func scopeProfile() *profile.Profile {
	return &profile.Profile{
		Executable: "/src/app", Mode: profile.ModeLinesFuncs, Notes: []string{"first"},
		Lines: []profile.Line{
			{File: "/src/main.cpp", Line: 3, Count: 1},
			{File: "/src/vendor/fmt/format.h", Line: 10, Count: 2},
			{File: "/usr/include/c++/13/bits/stl_vector.h", Line: 100, Count: 5},
			{File: "/root/go/pkg/mod/example.com/lib@v1.0.0/lib.go", Line: 4, Count: 1},
		},
		Functions: []profile.Function{
			{Name: "_init", Count: 1, Address: 0x1000},
			{Name: "_start", Count: 1, Address: 0x1040},
			{Name: "frame_dummy", Count: 1, Address: 0x1120},
			{Name: "main", Count: 1, File: "/src/main.cpp", Line: 3, Address: 0x1130},
			{Name: "std::vector<int>::push_back", Count: 5, File: "/usr/include/c++/13/bits/stl_vector.h", Line: 100, Address: 0x1200},
			{Name: "_init", Count: 1, Address: 0x1000, Module: "/src/libx.so"},
			{Name: "_start", Count: 0, File: "/src/start.c", Line: 1, Address: 0x1300},
			{Name: "puts@plt", Count: 2, Address: 0x1030},
		},
		Branches: []profile.Branch{{File: "/usr/include/c++/13/bits/stl_vector.h", Line: 100}, {File: "/src/main.cpp", Line: 3}},
		Blocks:   []profile.Block{{Address: 0x1000, End: 0x1010, Function: 0x1000}, {Address: 0x1130, End: 0x1140, Function: 0x1130}},
		Edges:    []profile.Edge{{From: 0x1000, To: 0x1008}, {From: 0x1130, To: 0x1138}},
	}
}

// TestScope: by default the listing and exports see the user's code: no
// start-up functions without lines of their own (one with a source stays),
// no system headers; vendored and module-cache sources stay; each flag
// brings its part back, and the profile itself is untouched.
func TestScope(t *testing.T) {
	p := scopeProfile()
	before := scopeProfile()
	q := Scope{}.Apply(p)
	if !reflect.DeepEqual(p, before) {
		t.Fatal("Apply modified its profile")
	}
	var names, files, branchFiles []string
	for _, f := range q.Functions {
		names = append(names, f.Name+"@"+f.Module)
	}
	for _, l := range q.Lines {
		files = append(files, l.File)
	}
	for _, b := range q.Branches {
		branchFiles = append(branchFiles, b.File)
	}
	if want := []string{"main@", "_start@", "puts@plt@"}; !slices.Equal(names, want) {
		t.Errorf("functions %q, want %q", names, want)
	}
	if want := []string{"/src/main.cpp", "/src/vendor/fmt/format.h", "/root/go/pkg/mod/example.com/lib@v1.0.0/lib.go"}; !slices.Equal(files, want) {
		t.Errorf("line files %q, want %q", files, want)
	}
	if want := []string{"/src/main.cpp"}; !slices.Equal(branchFiles, want) {
		t.Errorf("branch files %q, want %q", branchFiles, want)
	}
	if len(q.Blocks) != 1 || q.Blocks[0].Address != 0x1130 || len(q.Edges) != 1 || q.Edges[0].From != 0x1130 {
		t.Errorf("blocks %v, edges %v: want only main's", q.Blocks, q.Edges)
	}
	want := []string{"first",
		"left out: 3 C start-up functions without source lines (_init, _start, frame_dummy): --all-funcs shows them",
		"left out: 1 source file in system directories (/usr/include): --all-files shows them"}
	if !slices.Equal(q.Notes, want) {
		t.Errorf("notes:\n%q\nwant\n%q", q.Notes, want)
	}

	if q := (Scope{AllFuncs: true, AllFiles: true}).Apply(p); q != p {
		t.Error("Scope{AllFuncs, AllFiles} made a copy; want the profile itself")
	}
	q = Scope{AllFuncs: true}.Apply(p)
	if len(q.Functions) != 7 || len(q.Lines) != 3 {
		t.Errorf("--all-funcs: %d functions, %d lines; want 7 and 3", len(q.Functions), len(q.Lines))
	}
	q = Scope{AllFiles: true}.Apply(p)
	if len(q.Functions) != 4 || len(q.Lines) != 4 {
		t.Errorf("--all-files: %d functions, %d lines; want 4 and 4", len(q.Functions), len(q.Lines))
	}

	// The file of the crash line stays, header or not.
	p.Exit = profile.Exit{Signal: "SIGSEGV", File: "/usr/include/c++/13/bits/stl_vector.h", Line: 100}
	if q := (Scope{AllFuncs: true}).Apply(p); q != p {
		t.Error("the crash file was left out")
	}
}

// TestScopeUnrun: a static program's C library functions, without source
// lines, are left out when they never ran; the ones that ran stay, and so
// does the function a crash named. A module without the user's sources
// (built without -g) keeps every function.
func TestScopeUnrun(t *testing.T) {
	p := &profile.Profile{
		Executable: "/src/app", Mode: profile.ModeFuncs,
		Exit: profile.Exit{Signal: "SIGSEGV", Function: "abort_here", PC: new(profile.Address(0x5008))},
		Functions: []profile.Function{
			{Name: "main", Count: 1, File: "/src/main.c", Line: 3, Address: 0x1000},
			{Name: "never", Count: 0, File: "/src/main.c", Line: 9, Address: 0x1100},
			{Name: "printf", Count: 3, Address: 0x2000},
			{Name: "wmemset", Count: 0, Address: 0x3000},
			{Name: "__memcpy_evex", Count: 0, Address: 0x4000},
			{Name: "inner", Count: 0, BlocksExecuted: 1, Blocks: 2, Address: 0x4800},
			{Name: "abort_here", Count: 0, Address: 0x5000},
			{Name: "_start", Count: 1, Address: 0x0f00},
			{Name: "lib_unused", Count: 0, Address: 0x100, Module: "/lib/libnodebug.so"},
		},
		Modules: []profile.Module{{Path: "/lib/libnodebug.so", Kind: profile.ModuleLibrary}},
		Blocks:  []profile.Block{{Address: 0x3000, End: 0x3010, Function: 0x3000}, {Address: 0x1000, End: 0x1010, Function: 0x1000}},
	}
	q := Scope{}.Apply(p)
	var names []string
	for _, f := range q.Functions {
		names = append(names, f.Name)
	}
	if want := []string{"main", "never", "printf", "inner", "abort_here", "lib_unused"}; !slices.Equal(names, want) {
		t.Errorf("functions %q, want %q", names, want)
	}
	if len(q.Blocks) != 1 || q.Blocks[0].Address != 0x1000 {
		t.Errorf("blocks %v: want only main's", q.Blocks)
	}
	want := []string{
		"left out: 1 C start-up function without source lines (_start): --all-funcs shows them",
		"left out: 2 functions without source lines that never ran (library code linked in, such as a static C library): --all-funcs shows them"}
	if !slices.Equal(q.Notes, want) {
		t.Errorf("notes:\n%q\nwant\n%q", q.Notes, want)
	}
	if q := (Scope{AllFuncs: true}).Apply(p); q != p {
		t.Error("--all-funcs left functions out")
	}
}

// TestIsSystemSource: system directories by prefix, never by a look-alike
// name.
func TestIsSystemSource(t *testing.T) {
	for _, tc := range []struct {
		file string
		want bool
	}{
		{"/usr/include/stdio.h", true},
		{"/usr/include/c++/13/bits/stl_vector.h", true},
		{"/usr/lib/gcc/x86_64-linux-gnu/13/include/stddef.h", true},
		{"/usr/lib/llvm-18/lib/clang/18/include/stddef.h", true},
		{"/usr/local/go/src/runtime/proc.go", true},
		{"$GOROOT/src/fmt/print.go", true},
		{"/usr/include/../../src/a.c", false},
		{"/usr/includes/a.h", false},
		{"/usr/include", true},
		{"/usr/include/", true},
		{"/usr/includ", false},
		{"/usr/local/include/zlib.h", false},
		{"/home/u/src/include/a.h", false},
		{"", false},
	} {
		if got := IsSystemSource(tc.file, SystemDirs); got != tc.want {
			t.Errorf("IsSystemSource(%q) = %v, want %v", tc.file, got, tc.want)
		}
	}
}
