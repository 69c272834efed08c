package breakpoint

import (
	"bytes"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/symtab"
)

// fibO0 is fib as gcc 12 -O0 compiles it (fibSource):
// breakpoint/jump/wholeblock_test.go has it instruction by instruction.
const fibO0 = "554889e5534883ec18897dec837dec017f078b45ec4898eb208b45ec83e80189c7e8daffffff" +
	"4889c38b45ec83e80289c7e8caffffff4801d8488b5df8c9c3"

// fibSource is the C of fibO0.
const fibSource = `long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv) { return (int)fib(argc + 20) & 1; }
`

// TestPlanTails: with lines counted, fib's base case is derived, and the
// entry's trampoline runs it; the epilogue's block, counted, is no tail.
func TestPlanTails(t *testing.T) {
	sym, lt := buildSource(t, "fib.c", fibSource, "-O0")
	po := PlanOptions{Lines: true, Funcs: true}
	p := NewPlan(sym, lt, po)
	p.PlanJumps(sym, po)
	tab := p.Table
	var f symtab.Func
	for _, g := range sym.Funcs {
		if g.Name == "fib" {
			f = g
		}
	}
	entry, ok := tab.Index(f.Addr)
	if !ok {
		t.Fatal("no site at fib's entry")
	}
	code, _ := sym.Code(f.Addr, int(f.Size))
	if want, _ := hex.DecodeString(fibO0); !bytes.Equal(code, want) {
		t.Skipf("gcc compiled fib differently from fibO0: % x", code)
	}
	if n := tab.JumpLen(entry); n != 0x12 {
		t.Fatalf("entry: jump length %d, want the whole block, 18", n)
	}
	const at = 0x7f0000
	tr, err := tab.BuildTrampoline(entry, append(slices.Clone(code), make([]byte, 16)...), at, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	addrs := tr.Relocated()
	third, _ := tr.Equivalent(addrs[len(addrs)-3])
	if _, p := tr.Where(third); tr.Len != 0x12 || len(addrs) != 10 || addrs[7] != f.Addr+0x12 || p != jump.InDisplaced {
		t.Errorf("entry: %d bytes patched, instructions at %#x, want 18 and the base case's 3 after the block's 7", tr.Len, addrs)
	}
	// An instruction of the block that cannot run out of line (here ud2
	// over the `sub $0x18,%rsp` the file has): the shortest patch.
	odd := append(slices.Clone(code), make([]byte, 16)...)
	copy(odd[5:], []byte{0x0f, 0x0b, 0x90, 0x90})
	if tr, err := tab.BuildTrampoline(entry, odd, at, 8, nil); err != nil || tr.Len != 5 || len(tr.Relocated()) != 3 {
		t.Errorf("entry with ud2 inside: %v, want the 5 bytes before it and no tail", err)
	}
	if s, ok := tab.Index(f.Addr + 0x12); ok && !tab.Derived(s) {
		t.Errorf("the base case has a site %d, not derived", s)
	}
	epi, ok := tab.Index(f.Addr + 0x39)
	if !ok || tab.Derived(epi) {
		t.Fatal("the epilogue is not counted")
	}
	if tr, err := tab.BuildTrampoline(epi, append(slices.Clone(code[0x39:]), make([]byte, 16)...), at, 16, nil); err != nil || tr.Len != 6 || len(tr.Relocated()) != 3 {
		t.Errorf("epilogue: %v, want its 6 bytes (3 instructions) and no tail", err)
	}
}
