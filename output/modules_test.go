package output

import (
	"github.com/patchprof/patchprof/profile"
)

// twoModules is a lines-and-funcs profile over exportSources in dir that
// counted two modules: the executable dir/a and the library dir/libb.so.
// b.c is compiled into both, so the file-based exports sum its lines
// (b.c:1 is 0+2, b.c:3 is 0+2) and its function unused (0+2), while the
// listing and pprof keep the modules apart.
func twoModules() *profile.Profile {
	a, b, lib := dir+"/a.c", dir+"/b.c", dir+"/libb.so"
	return &profile.Profile{
		Version:    profile.Version,
		Executable: dir + "/a",
		BuildID:    "aaaa0001",
		Args:       []string{"./a"},
		Mode:       profile.ModeLinesFuncs,
		Exit:       profile.Exit{Code: intp(0)},
		Modules:    []profile.Module{{Path: lib, BuildID: "bbbb0002", Kind: profile.ModuleLibrary}},
		Lines: []profile.Line{
			{File: b, Line: 3, Count: 2, Module: lib},
			{File: a, Line: 3, Count: 5},
			{File: a, Line: 5, Count: 5},
			{File: a, Line: 6, Count: 0},
			{File: a, Line: 8, Count: 1},
			{File: a, Line: 10, Count: 1},
			{File: b, Line: 1, Count: 0},
			{File: b, Line: 3, Count: 0},
			{File: b, Line: 1, Count: 2, Module: lib},
		},
		Functions: []profile.Function{
			{Name: "unused", Count: 2, File: b, Line: 1, Address: 0x1100, Module: lib},
			{Name: "main", Count: 1, File: a, Line: 8, Address: 0x401150},
			{Name: "_init", Count: 1, Address: 0x1000, Module: lib},
			{Name: "unused", Count: 0, File: b, Line: 1, Address: 0x401180},
			{Name: "sq", Count: 5, File: a, Line: 3, Address: 0x401126},
		},
	}
}
