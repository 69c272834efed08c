package unwind

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// build compiles testdata/chain.c with gcc -O2 and returns its path, its
// functions' addresses, and the return address of middle's call of work
// (the instruction after its call, found in its code).
func build(t *testing.T) (exe string, syms map[string]elf.Symbol, ra uint64) {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	exe = filepath.Join(t.TempDir(), "chain")
	if out, err := exec.Command(gcc, "-g", "-O2", "-fomit-frame-pointer", "-o", exe, "testdata/chain.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	syms = map[string]elf.Symbol{}
	for _, s := range all {
		syms[s.Name] = s
	}
	mid, work := syms["middle"], syms["work"]
	text := f.Section(".text")
	data, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	code := data[mid.Value-text.Addr : mid.Value-text.Addr+mid.Size]
	for k := 0; k+5 <= len(code); k++ {
		next := mid.Value + uint64(k) + 5
		if code[k] == 0xe8 && next+uint64(int64(int32(binary.LittleEndian.Uint32(code[k+1:])))) == work.Value {
			ra = next
		}
	}
	if ra == 0 {
		t.Fatalf("no call of work in middle's code % x", code)
	}
	return exe, syms, ra
}

// TestWalk walks from work's entry, where its return address is the word
// at the stack pointer, through middle, whose frame the CFI sizes, to a
// zero return address: the outermost frame. With a bias (a PIE mapped
// elsewhere), the walk is the same.
func TestWalk(t *testing.T) {
	exe, syms, ra := build(t)
	tab, err := Load(exe)
	if err != nil {
		t.Fatal(err)
	}
	for _, bias := range []uint64{0, 0x7f0000000000} {
		find := func(pc uint64) (*Table, uint64, bool) { return tab, pc - bias, true }
		stack := make([]byte, 4096)
		binary.LittleEndian.PutUint64(stack, ra+bias)
		const sp = 0x7ffc0000
		got, complete := Walk(Regs{IP: syms["work"].Value + bias, SP: sp}, Stack{Base: sp, Data: stack}, find, 10, nil)
		if len(got) != 1 || got[0] != ra+bias || !complete {
			t.Errorf("bias %#x: Walk = %#x, complete %v; want [%#x], complete", bias, got, complete, ra+bias)
		}
		// The same stack cut to one word: middle's return address is
		// past the copy, and the walk stops there, incomplete.
		got, complete = Walk(Regs{IP: syms["work"].Value + bias, SP: sp}, Stack{Base: sp, Data: stack[:8]}, find, 10, nil)
		if len(got) != 1 || complete {
			t.Errorf("bias %#x: Walk over one word = %#x, complete %v; want one address, incomplete", bias, got, complete)
		}
		// An address no module holds ends the walk at once.
		none := func(uint64) (*Table, uint64, bool) { return nil, 0, false }
		if got, complete := Walk(Regs{IP: 1, SP: sp}, Stack{Base: sp, Data: stack}, none, 10, nil); len(got) != 0 || complete {
			t.Errorf("Walk outside every module = %#x, %v; want nothing, incomplete", got, complete)
		}
	}
}

// TestLoadErrors: a file that is not ELF is an error; an ELF file without
// .eh_frame is ErrNoCFI; a damaged section is an error, not a panic.
func TestLoadErrors(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk")
	if err := os.WriteFile(junk, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(junk); err == nil {
		t.Error("Load of a non-ELF file: no error")
	}
	exe, _, _ := build(t)
	stripped := filepath.Join(t.TempDir(), "nocfi")
	if out, err := exec.Command("objcopy", "--remove-section=.eh_frame", "--remove-section=.eh_frame_hdr", exe, stripped).CombinedOutput(); err != nil {
		t.Skipf("objcopy: %v\n%s", err, out)
	}
	if _, err := Load(stripped); !errors.Is(err, ErrNoCFI) {
		t.Errorf("Load without .eh_frame: %v, want ErrNoCFI", err)
	}
	for _, b := range [][]byte{{0xff, 0xff, 0xff, 0xff}, {8, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}, {20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 9, 9, 9, 9}} {
		parse(b, 0x1000) // must not panic
	}
}

// FuzzWalk: no stack copy, register values or CFI section makes Walk or
// parse panic.
func FuzzWalk(f *testing.F) {
	f.Add([]byte{20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 1, 0x1b}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, uint64(0x1000), uint64(0x7000))
	f.Fuzz(func(t *testing.T, cfi, stack []byte, ip, sp uint64) {
		tab, err := parse(cfi, 0x1000)
		if err != nil {
			return
		}
		find := func(pc uint64) (*Table, uint64, bool) { return tab, pc, true }
		Walk(Regs{IP: ip, SP: sp}, Stack{Base: sp, Data: stack}, find, 8, nil)
	})
}

// TestCFAExpr evaluates the CFA expression GNU ld writes for a PLT (as
// readelf -wf shows it: rsp + 8, and 8 more from the stub's push on):
// a thread at a stub's jump (offset 0 of 16) has its return address at
// the stack pointer, one after the push (offset 11) a word above; an
// operation the evaluator does not follow refuses the expression.
func TestCFAExpr(t *testing.T) {
	plt := []byte{0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}
	for _, c := range []struct{ pc, want uint64 }{
		{0x1030, 0x7000 + 8}, {0x1036, 0x7000 + 8}, {0x103a, 0x7000 + 8},
		{0x103b, 0x7000 + 16}, {0x103f, 0x7000 + 16},
	} {
		if got, ok := cfaExpr(plt, c.pc, 0x7000); !ok || got != c.want {
			t.Errorf("at %#x: cfa %#x, %v; want %#x", c.pc, got, ok, c.want)
		}
	}
	for _, bad := range [][]byte{
		{0x06},             // DW_OP_deref
		{0x77},             // breg without its offset
		{0x22},             // plus on an empty stack
		{0x77, 0x08, 0x31}, // two values left
		{0x77, 0x7f},       // a negative offset is fine...
	} {
		got, ok := cfaExpr(bad, 0x1000, 0x7000)
		if len(bad) == 2 && bad[1] == 0x7f {
			if !ok || got != 0x7000-1 {
				t.Errorf("%x: %#x, %v; want %#x", bad, got, ok, 0x7000-1)
			}
			continue
		}
		if ok {
			t.Errorf("%x: %#x accepted; want refused", bad, got)
		}
	}
}
