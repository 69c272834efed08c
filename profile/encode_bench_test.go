package profile

import (
	"fmt"
	"io"
	"testing"
)

// bigProfile is a profile of SQLite's size under --lines --funcs: 46,000
// lines, 2,400 functions and 35,000 sites.
func bigProfile() *Profile {
	code := 0
	p := &Profile{Version: Version, Executable: "/x", Args: []string{"/x"}, Mode: ModeLinesFuncs, Exit: Exit{Code: &code}}
	for i := 0; i < 46000; i++ {
		p.Lines = append(p.Lines, Line{File: "/home/u/sqlite/sqlite3-binding.c", Line: i + 1, Count: uint64(i * 3), Function: fmt.Sprintf("sqlite3Func%d", i/20)})
	}
	for i := 0; i < 2400; i++ {
		p.Functions = append(p.Functions, Function{Name: fmt.Sprintf("sqlite3Func%d", i), Count: uint64(i), File: "/home/u/sqlite/sqlite3-binding.c", Line: i*20 + 1, Address: Address(0x1000 + i*64)})
	}
	for i := 0; i < 35000; i++ {
		p.Sites = append(p.Sites, Site{Address: Address(0x1000 + i*4), Count: uint64(i), Kind: KindLine})
	}
	return p
}

// BenchmarkEncodeBig measures Encode (validation, sorting, writing) on a
// profile of SQLite's size.
func BenchmarkEncodeBig(b *testing.B) {
	p := bigProfile()
	for b.Loop() {
		if err := p.Encode(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
