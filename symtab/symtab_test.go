package symtab

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// testProg has a plain function (add), two aliases of it (one the
// programmer would write, one implementation name), and an assembly
// function without st_size (nosize).
const testProg = `
#include <stdio.h>
int add(int a, int b) { return a + b; }
int plus(int a, int b) __attribute__((alias("add")));
int __add_impl(int a, int b) __attribute__((alias("add")));
__asm__(".text\n.globl nosize\n.type nosize,@function\nnosize:\n\tnop\n\tnop\n\tret\n");
int main(int argc, char **argv) {
	printf("%d\n", add(argc, 2));
	return plus(argc, 1) == 0;
}
`

// mustHaveCC skips the test when there is no C compiler to build targets.
func mustHaveCC(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found in PATH: cannot build test executables")
	}
}

// buildC compiles src with gcc and flags into a fresh temporary directory
// and returns the executable's path, showing compiler output on failure.
func buildC(t testing.TB, src string, flags ...string) string {
	t.Helper()
	mustHaveCC(t)
	dir := t.TempDir()
	c := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "prog")
	args := append(append([]string{}, flags...), "-o", out, c)
	if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

func funcByName(t *testing.T, f *File, name string) Func {
	t.Helper()
	for _, fn := range f.Funcs {
		if fn.Name == name || contains(fn.Aliases, name) {
			return fn
		}
	}
	t.Fatalf("function %q not found among %d functions", name, len(f.Funcs))
	return Func{}
}

func TestOpenC(t *testing.T) {
	tests := []struct {
		name     string
		flags    []string
		wantType elf.Type
		dynOnly  bool // stripped: only .dynsym names remain
	}{
		{"no-pie", []string{"-O1", "-no-pie"}, elf.ET_EXEC, false},
		{"pie", []string{"-O1", "-pie", "-fPIE"}, elf.ET_DYN, false},
		{"static", []string{"-O1", "-static"}, elf.ET_EXEC, false},
		{"stripped-rdynamic", []string{"-O1", "-rdynamic", "-s"}, elf.ET_DYN, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := buildC(t, testProg, append(tt.flags, "-Wl,--build-id")...)
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Type != tt.wantType {
				t.Errorf("Type = %v, want %v", f.Type, tt.wantType)
			}
			if !filepath.IsAbs(f.Path) {
				t.Errorf("Path %q is not absolute", f.Path)
			}
			if len(f.BuildID) != 40 {
				t.Errorf("BuildID = %q, want 40 hex digits (sha1)", f.BuildID)
			}
			if f.Entry == 0 {
				t.Error("Entry = 0")
			}
			for i := 1; i < len(f.Funcs); i++ {
				if f.Funcs[i-1].Addr >= f.Funcs[i].Addr {
					t.Fatalf("Funcs not strictly sorted at %d: %#x, %#x", i, f.Funcs[i-1].Addr, f.Funcs[i].Addr)
				}
			}
			for _, fn := range f.Funcs {
				if fn.Size == 0 {
					t.Errorf("%s has size 0", fn.Name)
				}
				if _, ok := f.Code(fn.Addr, int(min(fn.Size, 16))); !ok {
					t.Errorf("Code(%s) not available", fn.Name)
				}
			}
			add := funcByName(t, f, "add")
			if add.Name != "add" || strings.Join(add.Aliases, ",") != "__add_impl,plus" {
				t.Errorf("add: Name %q Aliases %q, want add [__add_impl plus]", add.Name, add.Aliases)
			}
			if add.Size == 0 {
				t.Error("add has size 0")
			}
			main := funcByName(t, f, "main")
			if i, ok := f.FuncAt(main.Addr + main.Size - 1); !ok || f.Funcs[i].Name != "main" {
				t.Errorf("FuncAt(last byte of main) = %d, %v", i, ok)
			}
			if tt.dynOnly {
				return
			}
			nosize := funcByName(t, f, "nosize")
			if nosize.Size < 3 {
				t.Errorf("nosize: Size %d, want >= 3 (distance to next function)", nosize.Size)
			}
		})
	}
}

func TestInstructionStartsMain(t *testing.T) {
	path := buildC(t, testProg, "-O0", "-no-pie")
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	main := funcByName(t, f, "main")
	code, ok := f.Code(main.Addr, int(main.Size))
	if !ok {
		t.Fatalf("Code(main %#x, %d) not available", main.Addr, main.Size)
	}
	starts, err := InstructionStarts(code, main.Addr)
	if err != nil {
		t.Fatalf("InstructionStarts(main): %v", err)
	}
	if len(starts) < 5 || starts[0] != main.Addr {
		t.Fatalf("starts = %#x, want main's entry %#x first", starts, main.Addr)
	}
	for i, s := range starts {
		inst, err := x86asm.Decode(code[s-main.Addr:], 64)
		if err != nil {
			t.Fatalf("decode at %#x: %v", s, err)
		}
		next := main.Addr + main.Size
		if i+1 < len(starts) {
			next = starts[i+1]
		}
		if s+uint64(inst.Len) != next {
			t.Errorf("start %#x + len %d != next start %#x", s, inst.Len, next)
		}
	}
}

func TestInstructionStarts(t *testing.T) {
	tests := []struct {
		name    string
		code    []byte
		want    []uint64
		wantErr error
	}{
		{"empty", nil, []uint64{}, nil},
		{"push-mov-ret", []byte{0x55, 0x48, 0x89, 0xe5, 0xc3}, []uint64{0x1000, 0x1001, 0x1004}, nil},
		{"int3", []byte{0xcc, 0x90}, []uint64{0x1000, 0x1001}, nil},
		{"truncated-call", []byte{0x90, 0xe8, 0x00}, []uint64{0x1000}, x86asm.ErrTruncated},
		{"truncated-rex", []byte{0x90, 0x48}, []uint64{0x1000}, x86asm.ErrTruncated},
		{"invalid-in-64-bit", []byte{0x90, 0x06}, []uint64{0x1000}, x86asm.ErrUnrecognized}, // push es
		// x86asm v0.33 gives VZEROUPPER and VZEROALL length 4.
		{"vzeroupper-ret", []byte{0xc5, 0xf8, 0x77, 0xc3}, []uint64{0x1000, 0x1003}, nil},
		{"vzeroall-nop", []byte{0xc5, 0xfc, 0x77, 0x90}, []uint64{0x1000, 0x1003}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InstructionStarts(tt.code, 0x1000)
			if (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				var de *DecodeError
				if !errors.As(err, &de) || de.Addr != tt.want[len(tt.want)-1]+1 || !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %#v, want *DecodeError at the failing byte wrapping %v", err, tt.wantErr)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("starts = %#x, want %#x", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("starts = %#x, want %#x", got, tt.want)
				}
			}
		})
	}
}

// elfHeader crafts an ELF file header of the given class and machine,
// little-endian, with no program or section headers.
func elfHeader(class elf.Class, machine elf.Machine) []byte {
	var b bytes.Buffer
	ident := [16]byte{0x7f, 'E', 'L', 'F', byte(class), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)}
	b.Write(ident[:])
	if class == elf.ELFCLASS32 {
		binary.Write(&b, binary.LittleEndian, elf.Header32{
			Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(machine),
			Version: uint32(elf.EV_CURRENT), Ehsize: 52,
		})
	} else {
		binary.Write(&b, binary.LittleEndian, elf.Header64{
			Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(machine),
			Version: uint32(elf.EV_CURRENT), Ehsize: 64,
		})
	}
	return b.Bytes()[16:]
}

// minimalExec crafts a valid x86-64 executable: one PT_LOAD R+X segment
// holding `nop; ret` at 0x401000 and no sections.
func minimalExec() []byte {
	var b bytes.Buffer
	ident := [16]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)}
	const codeOff = 64 + 56
	binary.Write(&b, binary.LittleEndian, elf.Header64{
		Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_X86_64),
		Version: uint32(elf.EV_CURRENT), Entry: 0x401000 + codeOff, Phoff: 64,
		Ehsize: 64, Phentsize: 56, Phnum: 1,
	})
	binary.Write(&b, binary.LittleEndian, elf.Prog64{
		Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Off: 0,
		Vaddr: 0x401000, Paddr: 0x401000, Filesz: codeOff + 2, Memsz: codeOff + 2, Align: 0x1000,
	})
	b.Write([]byte{0x90, 0xc3})
	return b.Bytes()
}

func writeTemp(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		want    error
		wantMsg string
	}{
		{"empty", nil, ErrNotELF, ""},
		{"magic-only", []byte("\x7fELF"), ErrNotELF, "truncated"},
		{"script", []byte("#!/bin/sh\necho hi\n"), ErrNotELF, ""},
		{"bad-class", append([]byte("\x7fELF\x07\x01\x01"), make([]byte, 60)...), ErrNotELF, "class"},
		{"i386", elfHeader(elf.ELFCLASS32, elf.EM_386), ErrNotX86_64, "32-bit EM_386"},
		{"arm64", elfHeader(elf.ELFCLASS64, elf.EM_AARCH64), ErrNotX86_64, "64-bit EM_AARCH64"},
		{"x32", elfHeader(elf.ELFCLASS32, elf.EM_X86_64), ErrNotX86_64, "32-bit EM_X86_64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(writeTemp(t, tt.data))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("err %T is not a *FormatError", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %q, want it to mention %q", err, tt.wantMsg)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		_, err := Open(filepath.Join(t.TempDir(), "nope"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("err = %v, want fs.ErrNotExist", err)
		}
	})
}

func TestOpenMinimal(t *testing.T) {
	f, err := Open(writeTemp(t, minimalExec()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Funcs) != 0 || f.BuildID != "" {
		t.Errorf("Funcs %v BuildID %q, want none", f.Funcs, f.BuildID)
	}
	code, ok := f.Code(f.Entry, 2)
	if !ok || !bytes.Equal(code, []byte{0x90, 0xc3}) {
		t.Errorf("Code(entry, 2) = % x, %v", code, ok)
	}
	if _, ok := f.Code(f.Entry, 3); ok {
		t.Error("Code past the segment's file bytes succeeded")
	}
	if _, ok := f.FuncAt(f.Entry); ok {
		t.Error("FuncAt found a function in a binary without symbols")
	}
}

// TestOpenCorrupt is the "does not crash" table: every input must give an
// error or a usable File, never a panic.
func TestOpenCorrupt(t *testing.T) {
	real := readFile(t, buildC(t, testProg, "-O1"))
	rnd := rand.New(rand.NewSource(1))
	garbage := make([]byte, 4096)
	rnd.Read(garbage)
	inputs := map[string][]byte{
		"random":         garbage,
		"elf-random":     append([]byte("\x7fELF\x02\x01\x01"), garbage...),
		"header-only":    elfHeader(elf.ELFCLASS64, elf.EM_X86_64),
		"minimal-trunc":  minimalExec()[:100],
		"real-flipped-1": flip(real, rnd, 1),
		"real-flipped-8": flip(real, rnd, 8),
	}
	for _, n := range []int{5, 16, 20, 63, 64, 65, 120, 200, 512, 1000, 4096, len(real) / 2, len(real) - 1} {
		if n < len(real) {
			inputs["real-trunc-"+strconv.Itoa(n)] = real[:n]
		}
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			checkOpenNoPanic(t, data)
		})
	}
}

// checkOpenNoPanic opens data and exercises the File; it fails only on a
// panic (which the test framework reports) or an inconsistent result.
func checkOpenNoPanic(t testing.TB, data []byte) {
	f, err := Open(writeTemp(t, data))
	if err != nil {
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("err %T (%v) is not a *FormatError", err, err)
		}
		return
	}
	defer f.Close()
	for _, fn := range f.Funcs {
		f.FuncAt(fn.Addr)
		if code, ok := f.Code(fn.Addr, int(min(fn.Size, 64))); ok {
			InstructionStarts(code, fn.Addr)
		}
	}
	f.Code(f.Entry, 16)
}

func flip(data []byte, rnd *rand.Rand, n int) []byte {
	out := bytes.Clone(data)
	for range n {
		out[rnd.Intn(len(out))] ^= byte(1 + rnd.Intn(255))
	}
	return out
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzOpen(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x7fELF"))
	f.Add(elfHeader(elf.ELFCLASS64, elf.EM_X86_64))
	f.Add(elfHeader(elf.ELFCLASS32, elf.EM_386))
	f.Add(minimalExec())
	f.Fuzz(func(t *testing.T, data []byte) {
		checkOpenNoPanic(t, data)
	})
}

func FuzzInstructionStarts(f *testing.F) {
	f.Add([]byte{0x55, 0x48, 0x89, 0xe5, 0xc3}, uint64(0x401000))
	f.Add([]byte{0xe8, 0x00}, uint64(0))
	f.Add([]byte{0x0f, 0x1f, 0x44, 0x00, 0x00, 0xcc}, ^uint64(0)-3)
	f.Fuzz(func(t *testing.T, code []byte, addr uint64) {
		starts, err := InstructionStarts(code, addr)
		var de *DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("err %T is not a *DecodeError", err)
		}
		if len(starts) > len(code) {
			t.Fatalf("%d starts in %d bytes", len(starts), len(code))
		}
		for i := 1; i < len(starts); i++ {
			if d := starts[i] - starts[i-1]; d == 0 || d > 15 {
				t.Fatalf("instruction of length %d", d)
			}
		}
	})
}

func TestInstructionStartsEndbr64(t *testing.T) {
	// endbr64; push rbp; mov rbp,rsp; endbr32; ret
	code := []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0xf3, 0x0f, 0x1e, 0xfb, 0xc3}
	starts, err := InstructionStarts(code, 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{0x1000, 0x1004, 0x1005, 0x1008, 0x100c}
	if fmt.Sprint(starts) != fmt.Sprint(want) {
		t.Fatalf("starts %x, want %x", starts, want)
	}
}

// TestStructorVariant names a constructor or destructor by its
// base-object variant, as GCC's coverage notes do.
func TestStructorVariant(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"_ZN8tinyxml27XMLNodeC1EPNS_11XMLDocumentE", "_ZN8tinyxml27XMLNodeC2EPNS_11XMLDocumentE", 1},
		{"_ZN8tinyxml27XMLNodeD2Ev", "_ZN8tinyxml27XMLNodeD1Ev", -1},
		{"_ZN1AD0Ev", "_ZN1AD1Ev", 0},
		{"f1", "f2", 0},
		{"_ZN1AC1Ev", "_ZN1AC1Ev", 0},
	} {
		if got := structorVariant(tc.a, tc.b); got != tc.want {
			t.Errorf("structorVariant(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
