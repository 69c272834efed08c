package symtab

import (
	"debug/elf"
	"os"
	"testing"
)

// TestExportsFuncMatchesDebugElf checks ExportsFunc's in-place reading of
// .dynsym against debug/elf's DynamicSymbols, on the system's C library and
// dynamic linker: every defined function it exports, and names that are not
// functions or not there.
func TestExportsFuncMatchesDebugElf(t *testing.T) {
	for _, path := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"} {
		if _, err := os.Stat(path); err != nil {
			t.Skipf("%s: %v", path, err)
		}
		ef, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		syms, err := ef.DynamicSymbols()
		ef.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for i := range syms {
			if isFunc(&syms[i]) {
				want[syms[i].Name] = true
			}
		}
		names := []string{"_dl_debug_state", "malloc", "stdin", "environ", "no_such_function", "mallo", "mallocx", ""}
		for _, s := range syms {
			names = append(names, s.Name)
		}
		for _, n := range names {
			if got := ExportsFunc(path, n); got != want[n] {
				t.Errorf("ExportsFunc(%s, %q) = %v, want %v", path, n, got, want[n])
			}
		}
	}
	if !ExportsFunc("/lib64/ld-linux-x86-64.so.2", "_dl_debug_state") || ExportsFunc("/lib/x86_64-linux-gnu/libc.so.6", "_dl_debug_state") {
		t.Error("_dl_debug_state: want it exported by the dynamic linker only")
	}
}

// TestExportedObject finds the dynamic linker's _r_debug where debug/elf's
// DynamicSymbols puts it, and no function as an object.
func TestExportedObject(t *testing.T) {
	const ld = "/lib64/ld-linux-x86-64.so.2"
	ef, err := elf.Open(ld)
	if err != nil {
		t.Skipf("%s: %v", ld, err)
	}
	syms, err := ef.DynamicSymbols()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	var want uint64
	for _, s := range syms {
		if s.Name == "_r_debug" && elf.ST_TYPE(s.Info) == elf.STT_OBJECT {
			want = s.Value
		}
	}
	if got, ok := ExportedObject(ld, "_r_debug"); !ok || got != want || want == 0 {
		t.Errorf("ExportedObject(_r_debug) = %#x %v, want %#x", got, ok, want)
	}
	if _, ok := ExportedObject(ld, "_dl_debug_state"); ok {
		t.Error("ExportedObject found the function _dl_debug_state")
	}
}
