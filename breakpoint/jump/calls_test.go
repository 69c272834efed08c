package jump

import (
	"encoding/binary"
	"slices"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestEntryCheckDecodes decodes the entry check: every instruction after
// the first up to the count has its Rewind, the four after it (the
// overflow's jmp, the pops and the clearing of the pending word) have
// none (the monitor steps a thread there on), no other offset has one,
// every branch lands on an instruction of the check or just past it, and
// the stack the Rewinds describe follows the pushes and pops. The int3
// the check stops at when every slot is taken, uncounted, has its Rewind;
// the offset after it is the overflow's jmp.
func TestEntryCheckDecodes(t *testing.T) {
	for _, trap := range []bool{false, true} {
		entryCheckDecodes(t, trap)
	}
}

func entryCheckDecodes(t *testing.T, trap bool) {
	c, rw, overflow := appendEntryCheck(nil, EntryCheck{Slots: 0x1000, Trap: trap})
	if !trap && overflow != 0 {
		t.Errorf("without Trap: an int3 at %d", overflow-1)
	}
	if trap && (overflow < 1 || overflow >= len(c) || c[overflow-1] != 0xcc || c[overflow] != 0x0f) {
		t.Fatalf("overflow at %d: want just past an int3, at a nop", overflow)
	}
	if plain, _, _ := appendEntryCheck(nil, EntryCheck{Slots: 0x1000}); len(plain) != len(c) {
		t.Errorf("the check is %d bytes with Trap, %d without: Prologue.Pushed reads one layout", len(c), len(plain))
	}
	if r, ok := rw[overflow-1]; trap && (!ok || len(r.Saved) != 2) {
		t.Errorf("the overflow's int3: Rewind %+v %v, want %%rcx and %%rax saved", r, ok)
	}
	starts := map[int]bool{len(c): true}
	depth := 0
	var stepped []x86asm.Op
	for off := 0; off < len(c); {
		inst, err := x86asm.Decode(c[off:], 64)
		if err != nil {
			t.Fatalf("offset %d: %v", off, err)
		}
		starts[off] = true
		r, ok := rw[off]
		switch {
		case off == 0 && ok:
			t.Errorf("offset 0 has a Rewind: it is the site's own point")
		case off > 0 && !ok:
			stepped = append(stepped, inst.Op)
		case ok && r.SP != uint64(8*len(r.Saved)):
			t.Errorf("offset %d: SP %d with %d registers saved", off, r.SP, len(r.Saved))
		case ok && r.Counted:
			t.Errorf("offset %d: counted before the counter update", off)
		}
		switch inst.Op {
		case x86asm.PUSH:
			depth++
		case x86asm.POP:
			depth--
		}
		off += inst.Len
	}
	if depth != 0 {
		t.Errorf("pushes and pops leave %d words", depth)
	}
	want := []x86asm.Op{x86asm.JMP, x86asm.POP, x86asm.MOV, x86asm.POP}
	if trap {
		want = append([]x86asm.Op{x86asm.NOP}, want...)
	}
	if !slices.Equal(stepped, want) {
		t.Errorf("instructions without a Rewind: %v, want the overflow's jmp, pop, the clearing mov, pop", stepped)
	}
	for off := range rw {
		if !starts[off] {
			t.Errorf("Rewind at offset %d, inside an instruction", off)
		}
	}
	for off := 0; off < len(c); {
		inst, _ := x86asm.Decode(c[off:], 64)
		if rel, ok := inst.Args[0].(x86asm.Rel); ok {
			if to := off + inst.Len + int(rel); !starts[to] {
				t.Errorf("offset %d (%v): lands at %d, no instruction of the check", off, inst, to)
			}
		}
		off += inst.Len
	}
}

// TestTrampolineCallPoints builds a function entry's trampoline with an
// entry check and a pending call: a thread at the check's start or at the
// counter update stands at the site, uncounted; inside the check it is
// put back with %rax (and %rcx) from the stack; at a pending call's store
// it is counted, nothing displaced run.
func TestTrampolineCallPoints(t *testing.T) {
	code := []byte{0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10} // push %rbp; mov %rsp,%rbp; sub $16,%rsp
	const addr, at = 0x401000, 0x501000
	js := Site{Len: 8, FlagsDead: true, Entry: &EntryCheck{Slots: 0x2000, Trap: true}, Pend: &Pend{Key: 0x48, Delta: -8}}
	tr, err := BuildTrampoline(code, addr, at, js, 0x40)
	if err != nil {
		t.Fatal(err)
	}
	if orig, p := tr.Where(at); orig != addr || p != BeforeCount {
		t.Errorf("check's start: %#x %v", orig, p)
	}
	for off := 0; off < len(tr.Code); off++ {
		if got, want := tr.CallOverflow(at+uint64(off)), off == tr.overflow; got != want || want && tr.Code[off-1] != 0xcc {
			t.Errorf("CallOverflow at offset %d: %v, want %v (just past the check's int3)", off, got, want)
		}
	}
	if orig, p := tr.Where(at + uint64(tr.pre)); orig != addr || p != BeforeCount {
		t.Errorf("counter update: %#x %v", orig, p)
	}
	if _, p := tr.Where(at + 11); p != InCount {
		t.Errorf("after the check's je: %v, want InCount", p)
	}
	if rw, ok := tr.Rewind(at + 12); !ok || rw.SP != 8 || len(rw.Saved) != 1 || rw.Saved[0] != x86asm.RAX {
		t.Errorf("after push %%rax: %+v %v", rw, ok)
	}
	for _, off := range tr.pendAt {
		if orig, p := tr.Where(at + uint64(off)); orig != addr || p != Counted {
			t.Errorf("pending store at %d: %#x %v", off, orig, p)
		}
	}
	if len(tr.pendAt) != 4 || tr.starts[0] != tr.pendAt[3]+12 {
		t.Errorf("stores at %v, displaced code at %d", tr.pendAt, tr.starts[0])
	}
	if _, err := BuildTrampoline(code, addr, at, Site{Len: 8, KeepFlags: true, Entry: &EntryCheck{}}, 0x40); err == nil {
		t.Error("an entry check with the update that keeps the flags was built")
	}
}

// TestPendDistance checks the distance an entry expects: the check's own
// push, less the callee's stack pointer's delta from the block's start
// (Pend.Delta): for a call, the block's moves less the return address.
func TestPendDistance(t *testing.T) {
	for _, tc := range []struct {
		delta int32
		want  uint32
	}{
		{-8, 16},  // a call, nothing pushed before it
		{-16, 24}, // a call after a push
		{0, 8},    // a call after a pop; a tail jump, nothing moved
		{8, 0},    // a tail jump after a pop
	} {
		if got := (Pend{Delta: tc.delta}).distance(); got != tc.want {
			t.Errorf("delta %d: %d, want %d", tc.delta, got, tc.want)
		}
	}
}

// TestEntryCheckDepth: the entry check's pushes by offset agree with its
// Rewinds wherever those are given, and every branch lands where the
// depth is the branch's own.
func TestEntryCheckDepth(t *testing.T) {
	c, rw, _ := appendEntryCheck(nil, EntryCheck{Slots: 0x1000})
	for off, r := range rw {
		if got := PrologueEntryCheck.Pushed(off); got != r.SP {
			t.Errorf("offset %d: %d bytes pushed, the Rewind says %d", off, got, r.SP)
		}
	}
	for off := 0; off < len(c); {
		inst, err := x86asm.Decode(c[off:], 64)
		if err != nil {
			t.Fatal(err)
		}
		if rel, ok := inst.Args[0].(x86asm.Rel); ok {
			to := off + inst.Len + int(rel)
			if from, at := PrologueEntryCheck.Pushed(off), PrologueEntryCheck.Pushed(to); from != at {
				t.Errorf("offset %d (%v): %d bytes pushed, its target %d has %d", off, inst, from, to, at)
			}
		}
		off += inst.Len
	}
	if PrologueEntryCheck.Pushed(len(c)) != 0 || PrologueNone.Pushed(12) != 0 || PrologueKeepFlags.Pushed(6) != redZone+8 {
		t.Error("outside the prologue, or the plain update, something pushed; or the keeping update's push not seen")
	}
}

// TestTrampolineTailPend builds the trampoline of a block that leaves by
// a jump through a pointer after a pop (Delta 8): its pending key carries
// TailKey, the return address is read from 8(%rsp) into PendRetWord
// through %rax saved in ScratchWord, the stack pointer never moves, and
// a thread between those four instructions is stepped on (Inside).
func TestTrampolineTailPend(t *testing.T) {
	code := []byte{0x5b, 0x48, 0x89, 0xc3, 0x90} // pop %rbx; mov %rax,%rbx; nop: the block's first bytes
	const addr, at = 0x401000, 0x501000
	js := Site{Len: len(code), FlagsDead: true, Pend: &Pend{Key: 0x48, Delta: 8, Tail: true}}
	tr, err := BuildTrampoline(code, addr, at, js, 0x40)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.pendAt) != 4 {
		t.Fatalf("stores at %v, want 4", tr.pendAt)
	}
	var ops []x86asm.Op
	for off := tr.pendAt[2]; off < tr.pendAt[3]; {
		inst, err := x86asm.Decode(tr.Code[off:], 64)
		if err != nil {
			t.Fatal(err)
		}
		if off > tr.pendAt[2] {
			if _, p := tr.Where(at + uint64(off)); p != Inside {
				t.Errorf("offset %d inside the return address's read: %v, want Inside", off, p)
			}
		}
		ops = append(ops, inst.Op)
		if mem, ok := inst.Args[1].(x86asm.Mem); ok && mem.Base == x86asm.RSP && mem.Disp != 8 {
			t.Errorf("%v: reads %d(%%rsp), want 8(%%rsp)", inst, mem.Disp)
		}
		off += inst.Len
	}
	if !slices.Equal(ops, []x86asm.Op{x86asm.MOV, x86asm.MOV, x86asm.MOV, x86asm.MOV}) {
		t.Errorf("the return address's read: %v, want four movs", ops)
	}
	key := binary.LittleEndian.Uint32(tr.Code[tr.pendAt[3]+8:])
	if key != 0x48|TailKey || KeySite(uint64(key)) != 0x48 {
		t.Errorf("pending key %#x, want %#x with TailKey", key, 0x48)
	}
}
