package jump

import (
	"encoding/binary"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/patchprof/patchprof/cfg"
	"golang.org/x/arch/x86/x86asm"
)

// fibO0 is `long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }`
// as gcc 12 -O0 compiles it (bench/testdata/fib.c), at 0x1149:
//
//	1149 push %rbp; mov %rsp,%rbp; push %rbx; sub $0x18,%rsp;
//	     mov %edi,-0x14(%rbp); cmpl $0x1,-0x14(%rbp); jg 1162
//	115b mov -0x14(%rbp),%eax; cltq; jmp 1182
//	1162 mov -0x14(%rbp),%eax; sub $0x1,%eax; mov %eax,%edi; call fib
//	116f mov %rax,%rbx; mov -0x14(%rbp),%eax; sub $0x2,%eax; mov %eax,%edi; call fib
//	117f add %rbx,%rax
//	1182 mov -0x8(%rbp),%rbx; leave; ret
const fibO0 = "554889e5534883ec18897dec837dec017f078b45ec4898eb208b45ec83e80189c7e8daffffff" +
	"4889c38b45ec83e80289c7e8caffffff4801d8488b5df8c9c3"

// TestWholeBlock: a block is displaced whole, its branch, jump or return
// with it, or up to the call that ends it, which stays in place.
func TestWholeBlock(t *testing.T) {
	const fn = 0x1149
	code := mustHex(t, fibO0)
	g, err := cfg.Build(cfg.Options{Name: "fib", Addr: fn, Code: code, SplitCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr uint64
		want int
	}{
		{0x1149, 0x12}, // the entry, through its jg
		{0x115b, 7},    // through its jmp
		{0x1162, 8},    // up to its call
		{0x116f, 11},   // a return site, up to its call
		{0x117f, 3},    // falls through into the next block
		{0x1182, 6},    // through its ret
		{0x114a, 0},    // not a block's start
	} {
		if got, _ := WholeBlock(g, c.addr); got != c.want {
			t.Errorf("WholeBlock(%#x) = %d, want %d", c.addr, got, c.want)
		}
	}
	// A block longer than a trampoline holds keeps the shortest patch.
	long := slices.Repeat([]byte{0x90}, MaxHostLen+1)
	long = append(long, 0xc3)
	lg, err := cfg.Build(cfg.Options{Name: "long", Addr: 0x2000, Code: long})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := WholeBlock(lg, 0x2000); got != 0 {
		t.Errorf("a %d-byte block: wholeBlock = %d, want 0", len(long), got)
	}
}

// TestTrampolineExits: the jumps of a whole block's trampoline back to
// original code are its exits, each aimed where asked and back again; a
// block ending in ret has none.
func TestTrampolineExits(t *testing.T) {
	const fn, at = 0x401149, 0x7f0000
	code := append(mustHex(t, fibO0), make([]byte, 16)...)
	// target reads the rel32 at runtime address a of tr's code.
	target := func(tr *Trampoline, a uint64) uint64 {
		off := a - tr.At
		return a + 4 + uint64(int64(int32(binary.LittleEndian.Uint32(tr.Code[off:]))))
	}
	js, ok := PlanRun(code, fn, 0x12, func(uint64) bool { return false })
	if !ok {
		t.Fatal("the entry block does not run out of line")
	}
	tr, err := BuildTrampoline(code, fn, at, js, 8)
	if err != nil {
		t.Fatal(err)
	}
	x := tr.Exits()
	if len(x) != 2 || x[0].To != fn+0x19 || x[1].To != fn+0x12 {
		t.Fatalf("exits %+v, want the jg's target %#x and the next block %#x", x, fn+0x19, fn+0x12)
	}
	for _, e := range x {
		if got := target(tr, e.At); got != e.To {
			t.Errorf("exit at %#x goes to %#x, want %#x", e.At, got, e.To)
		}
	}
	const via = at + 5*TrampolineSize
	if _, ok := tr.Aim(0, via); !ok {
		t.Fatal("Aim: out of reach")
	}
	if got := target(tr, x[0].At); got != via {
		t.Errorf("aimed exit goes to %#x, want %#x", got, via)
	}
	if got := tr.Stale(func(uint64) uint64 { return via }); len(got) != 0 {
		t.Errorf("Stale with the site patched = %v, want none", got)
	}
	if got := tr.Stale(func(uint64) uint64 { return 0 }); !slices.Equal(got, []int{0}) {
		t.Errorf("Stale with the site unpatched = %v, want [0]", got)
	}
	if b, ok := tr.Aim(0, 0); !ok || target(tr, x[0].At) != x[0].To || len(b) != 4 {
		t.Errorf("aimed back: goes to %#x, want %#x", target(tr, x[0].At), x[0].To)
	}
	if got := tr.Stale(func(uint64) uint64 { return 0 }); len(got) != 0 {
		t.Errorf("Stale after aiming back = %v, want none", got)
	}

	ret, ok := PlanRun(code[0x39:], fn+0x39, 6, func(uint64) bool { return false })
	if !ok {
		t.Fatal("the epilogue does not run out of line")
	}
	rt, err := BuildTrampoline(code[0x39:], fn+0x39, at+TrampolineSize, ret, 16)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rt.Exits()); n != 0 || rt.Code[len(rt.Code)-1] != 0xC3 {
		t.Errorf("the epilogue's trampoline has %d exits and ends in %#x, want none and ret", n, rt.Code[len(rt.Code)-1])
	}

	// An arc counted on the taken side: its stub is not an exit.
	js.Edges = []EdgeCount{{Counter: 64, Taken: true}}
	arc, err := BuildTrampoline(code, fn, at, js, 8)
	if err != nil {
		t.Fatal(err)
	}
	ax := arc.Exits()
	if len(ax) != 2 || ax[0].To != fn+0x12 || ax[1].To != fn+0x19 {
		t.Fatalf("arc trampoline exits %+v, want the next block and the jg's target", ax)
	}
	for _, e := range ax {
		if got := target(arc, e.At); got != e.To {
			t.Errorf("arc exit at %#x goes to %#x, want %#x", e.At, got, e.To)
		}
	}
}

// TestTrampolineTail: fib's entry block runs whole, then its base case
// (`mov; cltq; jmp` to the epilogue), which it falls into, unpatched: the
// jg's target and the base case's jmp are the exits, the base case is not
// covered, and a thread in it is at its own original instruction.
func TestTrampolineTail(t *testing.T) {
	const fn, at = 0x401149, 0x7f0000
	code := append(mustHex(t, fibO0), make([]byte, 16)...)
	none := func(uint64) bool { return false }
	js, ok := PlanRun(code, fn, 0x12, none)
	tail, tok := PlanRun(code[0x12:], fn+0x12, 7, none)
	if !ok || !tok {
		t.Fatal("the entry block or the base case does not run out of line")
	}
	js.Insns = append(js.Insns, tail.Insns...)
	js.Tail = tail.Len
	tr, err := BuildTrampoline(code, fn, at, js, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Patch) != 0x12 || tr.Len != 0x12 {
		t.Errorf("patch of %d bytes (Len %d), want the entry block's 18", len(tr.Patch), tr.Len)
	}
	x := tr.Exits()
	if len(x) != 2 || x[0].To != fn+0x19 || x[1].To != fn+0x39 {
		t.Fatalf("exits %+v, want the jg's target %#x and the epilogue %#x", x, fn+0x19, fn+0x39)
	}
	for _, e := range x {
		off := e.At - tr.At
		if got := e.At + 4 + uint64(int64(int32(binary.LittleEndian.Uint32(tr.Code[off:])))); got != e.To {
			t.Errorf("exit at %#x goes to %#x, want %#x", e.At, got, e.To)
		}
	}
	if tr.Covers(fn + 0x12) {
		t.Error("the tail is covered: its bytes are not patched")
	}
	to, ok := tr.Equivalent(fn + 0x12)
	if !ok {
		t.Fatal("no trampoline point for the tail's first instruction")
	}
	if orig, p := tr.Where(to); orig != fn+0x12 || p != InDisplaced {
		t.Errorf("Where(tail) = %#x, %v; want %#x, InDisplaced", orig, p, fn+0x12)
	}
	// The jg is not the last instruction: with its jump back dropped, the
	// code reads counter, the block, the tail, with no jmp between.
	ops := trampolineOps(t, tr)
	want := []x86asm.Op{x86asm.PUSH, x86asm.MOV, x86asm.PUSH, x86asm.SUB, x86asm.MOV, x86asm.CMP, x86asm.JG, x86asm.MOV, x86asm.CDQE, x86asm.JMP}
	if !slices.Equal(ops, want) {
		t.Errorf("trampoline runs %v, want %v", ops, want)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
