package symtab

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
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

// TestExportsHashStyles: a library with a GNU hash table is looked up
// through it (the dynamic linker's way), one with only the System V table
// by the scan, and both agree with debug/elf on every symbol.
func TestExportsHashStyles(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "lib.c")
	code := "int counter; int one(void) { return 1; } int two(void) { return 2; } static int hidden(void) { return 3; } int three(void) { return hidden(); }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, style := range []string{"gnu", "sysv"} {
		lib := filepath.Join(dir, "lib"+style+".so")
		if out, err := exec.Command("gcc", "-shared", "-fPIC", "-Wl,--hash-style="+style, "-o", lib, src).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		ef, err := elf.Open(lib)
		if err != nil {
			t.Fatal(err)
		}
		_, _, hashed := exportsHashed(ef, "one", isFunc)
		ef.Close()
		if hashed != (style == "gnu") {
			t.Errorf("%s: looked up through a GNU hash table: %v", style, hashed)
		}
		for _, c := range []struct {
			name string
			fn   bool
		}{{"one", true}, {"two", true}, {"three", true}, {"hidden", false}, {"counter", false}, {"four", false}, {"", false}} {
			if got := ExportsFunc(lib, c.name); got != c.fn {
				t.Errorf("%s: ExportsFunc(%q) = %v, want %v", style, c.name, got, c.fn)
			}
		}
		if _, ok := ExportedObject(lib, "counter"); !ok {
			t.Errorf("%s: ExportedObject(counter) not found", style)
		}
	}
	ef, err := elf.Open("/lib/x86_64-linux-gnu/libc.so.6")
	if err != nil {
		t.Skip(err)
	}
	defer ef.Close()
	if _, found, hashed := exportsHashed(ef, "malloc", isFunc); !hashed || !found {
		t.Errorf("libc's malloc through its GNU hash table: found %v, hashed %v", found, hashed)
	}
}
