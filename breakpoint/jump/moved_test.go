package jump

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/patchprof/patchprof/symtab"
)

// movedSource is C with calls direct and through pointers, a switch, loops
// and data addressed RIP-relative.
const movedSource = `
#include <stdio.h>
static int table[64];
static int (*fp)(int);
static int sq(int x) { return x * x; }
static int pick(int k, int v) {
	switch (k & 7) {
	case 0: return v + 1;
	case 1: return v * 3;
	case 2: return sq(v);
	case 3: return table[v & 63];
	case 4: return fp ? fp(v) : 0;
	case 5: return v >> 2;
	default: return -v;
	}
}
int main(int argc, char **argv) {
	int s = 0;
	fp = sq;
	for (int i = 0; i < 1000; i++) {
		table[i & 63] += i;
		s += pick(i, s);
		if (s > 100000) s -= fp(3);
	}
	printf("%d\n", s);
	return 0;
}
`

// TestMovedTo builds trampolines for sites of a real binary (movedSource
// built -static at -O0 and -O2: the C library's code beside it, with
// calls, RIP-relative operands, branches and jump tables' dispatches) at
// one address and again as far away as a program
// run again may map (moves with and without a carry into an address's
// high half), with every kind of absolute address a trampoline may hold,
// and checks that the first, moved (Template, MovedTo), is the second in
// every byte and every field.
func TestMovedTo(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("gcc not found in PATH: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "moved.c")
	if err := os.WriteFile(src, []byte(movedSource), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []string{"-O0", "-O2"} {
		exe := filepath.Join(dir, "moved"+opt)
		if out, err := exec.Command(gcc, "-g", opt, "-static", "-o", exe, src).CombinedOutput(); err != nil {
			t.Skipf("gcc -static: %v\n%s", err, out)
		}
		testMovedTo(t, exe)
	}
}

func testMovedTo(t *testing.T, exe string) {
	sym, err := symtab.Open(exe)
	if err != nil {
		t.Fatalf("%s: %v", exe, err)
	}
	defer sym.Close()
	const region = 0x2000_0000 // from a site to its trampoline
	moves := []uint64{0x7f12_3456_7000 - 0x40_0000, 0xffff_f000, 0x1000}
	var built, calls, abs int
	for fi, f := range sym.Funcs {
		if fi%3 != 0 || f.Size < 16 {
			continue
		}
		code, ok := sym.Code(f.Addr, int(f.Size))
		if !ok {
			continue
		}
		for off := 0; off+JmpLen < len(code) && off < 256; off++ {
			addr := f.Addr + uint64(off)
			js := Plan(code[off:], addr, Options{End: f.Addr + f.Size})
			if js.Len == 0 {
				continue
			}
			for variant := range 4 {
				site := js
				ret := uint32(addr + 0x40)
				switch variant {
				case 1:
					site.Pend = &Pend{Key: 0x80, Delta: -8, Ret: ret}
				case 2:
					site.Pend = &Pend{Key: 0x80, Delta: 16, Tail: true}
					site.Entry = &EntryCheck{Slots: 0x1000, Lo: 0x40, Hi: 0x100}
				case 3:
					site.KeepFlags = true
				}
				at := addr + region
				a, err := BuildTrampoline(code[off:], addr, at, site, 0x48)
				if err != nil {
					continue
				}
				tmpl := a.Template()
				for _, d := range moves {
					moved := site
					if moved.Pend != nil && !moved.Pend.Tail {
						p := *moved.Pend
						p.Ret = ret + uint32(d)
						moved.Pend = &p
					}
					b, err := BuildTrampoline(code[off:], addr+d, at+d, moved, 0x48)
					if err != nil {
						t.Fatalf("%s+%#x: built at %#x, not at %#x: %v", f.Name, off, addr, addr+d, err)
					}
					m, ok := tmpl.MovedTo(addr+d, at+d)
					if !ok {
						t.Fatalf("%s+%#x: not moved by %#x", f.Name, off, d)
					}
					if !reflect.DeepEqual(m, b) {
						t.Fatalf("%s+%#x (variant %d) moved by %#x:\n got %+v\nwant %+v", f.Name, off, variant, d, m, b)
					}
					built++
					if len(a.abs) > 0 {
						abs++
					}
					if a.last != nil && len(a.last.Abs) > 0 {
						calls++
					}
				}
			}
		}
		if built > 30000 {
			break
		}
	}
	t.Logf("%s: %d trampolines moved, %d with an emulated call, %d with an absolute address", filepath.Base(exe), built, calls, abs)
	if built < 1000 || calls == 0 || abs == 0 {
		t.Fatalf("%d trampolines moved, %d with an emulated call, %d with an absolute address: too few to tell", built, calls, abs)
	}
	if _, ok := (&Trampoline{Addr: 0x1000, At: 0x9000}).MovedTo(0x2000, 0x9000); ok {
		t.Error("moved to a place at another distance from its site")
	}
}

// TestMovedToTableArcs moves a jump table's dispatch, whose trampoline
// holds the arcs' targets as absolute words.
func TestMovedToTableArcs(t *testing.T) {
	code := []byte{0xff, 0xe0, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90} // jmp *%rax
	const addr, at, d = 0x401000, 0x40401000, 0x5555_0000_0000
	ecs := func(d uint64) []EdgeCount {
		return []EdgeCount{{Counter: 0x50, Table: 0x401100 + d}, {Counter: 0x58, Table: 0x401200 + d}}
	}
	js := Site{Len: 2, Edges: ecs(0)}
	a, err := BuildTrampoline(code, addr, at, js, 0x48)
	if err != nil {
		t.Skipf("no trampoline for a table's dispatch here: %v", err)
	}
	js.Edges = ecs(d)
	b, err := BuildTrampoline(code, addr+d, at+d, js, 0x48)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := a.Template().MovedTo(addr+d, at+d)
	if !ok || !reflect.DeepEqual(m, b) {
		t.Fatalf("moved:\n got %+v\nwant %+v", m, b)
	}
}
