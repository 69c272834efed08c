package breakpoint

import "testing"

// TestIndirectCalls checks the callees of an indirect call: block 0 of
// loop stands for a block ending in `call *%rax` with no push before it,
// spin's entry for its callee. An entry at the call's stack pointer less
// the return address counts; one deeper (code outside the table calling
// back in), or after another trap, does not; Unhit takes a count back and
// restores the pending call.
func TestIndirectCalls(t *testing.T) {
	tab := blockTable(t)
	tab.SetIndirectCalls(map[int32]IndirectCall{0: {Delta: -8}})
	site := func(addr uint64) int {
		i, ok := tab.Index(addr)
		if !ok {
			t.Fatalf("no site at %#x", addr)
		}
		return i
	}
	call, callee, other := site(0x1000), site(0x4000), site(0x1002)
	arc := IndirectArc{Block: 0, Callee: 2}
	var c Cursor
	const sp = 0x7ff000
	tab.Hit(&c, call, sp)
	tab.Hit(&c, callee, sp-8)
	if n := tab.cnt.Indirect[arc]; n != 1 {
		t.Fatalf("after a call and its callee's entry: %d, want 1", n)
	}
	tab.Hit(&c, call, sp)
	tab.Hit(&c, callee, sp-0x100) // qsort calling a comparator back
	tab.Hit(&c, call, sp)
	tab.Hit(&c, other, sp) // another block first: the call did not run
	tab.Hit(&c, callee, sp-8)
	if n := tab.cnt.Indirect[arc]; n != 1 || len(tab.cnt.Indirect) != 1 {
		t.Fatalf("after entries the call did not make: %v, want only %v once", tab.cnt.Indirect, arc)
	}
	tab.Hit(&c, call, sp)
	u := tab.Hit(&c, callee, sp-8)
	tab.Unhit(&c, u)
	if n := tab.cnt.Indirect[arc]; n != 1 {
		t.Fatalf("after Unhit: %d, want 1", n)
	}
	tab.Hit(&c, callee, sp-8) // the signal handler returned: the entry again
	if n := tab.cnt.Indirect[arc]; n != 2 {
		t.Fatalf("after the entry's second trap: %d, want 2", n)
	}
	if got := tab.Counts().Indirect[arc]; got != 2 {
		t.Errorf("Counts copy: %d, want 2", got)
	}
}

// TestIndirectCallsGoCheck checks an indirect call into a Go function:
// its stack check (goish's first block) runs before its entry site, at
// the entry's stack pointer, and does not end the call.
func TestIndirectCallsGoCheck(t *testing.T) {
	tab := blockTable(t)
	tab.SetIndirectCalls(map[int32]IndirectCall{0: {Delta: -8}})
	check, _ := tab.Index(0x2000)
	entry, _ := tab.Index(0x2006)
	call, _ := tab.Index(0x1000)
	var c Cursor
	const sp = 0x7ff000
	tab.Hit(&c, call, sp)
	tab.Hit(&c, check, sp-8)
	tab.Hit(&c, entry, sp-8)
	if n := tab.cnt.Indirect[IndirectArc{Block: 0, Callee: 1}]; n != 1 {
		t.Errorf("goish entered through its stack check: %d, want 1 (%v)", n, tab.cnt.Indirect)
	}
}

// TestIndirectTailJump checks the callee of an indirect tail jump: block
// 0 of loop stands for a block ending in `pop %rbx; jmp *%rax`, spin's
// entry for its callee, entered at the block's stack pointer plus the
// pop (no return address pushed).
func TestIndirectTailJump(t *testing.T) {
	tab := blockTable(t)
	tab.SetIndirectCalls(map[int32]IndirectCall{0: {Delta: 8, Tail: true}})
	jmp, _ := tab.Index(0x1000)
	callee, _ := tab.Index(0x4000)
	arc := IndirectArc{Block: 0, Callee: 2}
	var c Cursor
	const sp = 0x7ff000
	tab.Hit(&c, jmp, sp)
	tab.Hit(&c, callee, sp-8) // as a call would enter it: not this jump's
	tab.Hit(&c, jmp, sp)
	tab.Hit(&c, callee, sp+8)
	if n := tab.cnt.Indirect[arc]; n != 1 || len(tab.cnt.Indirect) != 1 {
		t.Errorf("after two jumps, one entered as a jump enters: %v, want %v once", tab.cnt.Indirect, arc)
	}
}
