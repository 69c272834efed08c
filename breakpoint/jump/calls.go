package jump

import (
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"
)

// Which function an indirect call enters (--calls), counted in the target.
// A call through a register or memory names no callee in its code, and
// under this engine neither the call's block nor the callee's entry traps,
// so the two ends meet in the thread's slab:
//
//   - the trampoline of a block that ends in an indirect call records the
//     call as pending: the block's key (its own counter's offset, unique
//     in the slab) and the stack pointer the callee's entry will have,
//     given as the block's start SP and the distance expected between the
//     two (PendWord, PendSPWord), and the low half of the return address
//     the call pushes (PendRetWord);
//   - the trampoline of a function entry, before its count, looks at the
//     pending word; when one is set it clears it and, if the distance
//     from the recorded SP to its own is the one expected and its return
//     address is the call's, counts the call in its function's slots: CallSlots pairs (caller key, count),
//     a slot taken by the first key that needs it; a key that finds all
//     slots taken stops the thread at an int3 with the key in %eax, and
//     the monitor counts the call (EntryCheck.Trap,
//     Trampoline.CallOverflow), or, in a process that runs without
//     system-call stops (where an int3 would be a forced SIGTRAP), adds
//     it to an overflow word, among the callers unknown.
//
// The distance rules out what runs between the two deeper or shallower
// than the call: a signal handler, or code outside the counted modules
// that the callee was and that calls back into them (a qsort
// comparator). A call whose callee is not counted leaves the word set
// until the next entry clears it; the return address tells that entry
// apart from the call's (the caller, back from a C library function it
// called through a pointer, calling a counted function directly: the same
// stack pointer, another return address). Every word is the thread's own, so
// nothing is locked; the monitor reads the slots and gives each key's
// count to the call's block (its callee's entry count less these is
// "callers unknown", as before). A function entry counts with the plain
// add, whose flags are dead at any call's target, so the check may write
// them too.

// Slab words the call tracking uses, at the start of every slab (the
// monitor keeps its first CallWords bytes for them).
const (
	// PendWord holds the pending call: its key in the low 32 bits, the
	// distance expected in the high 32; 0 when none.
	PendWord = 0
	// PendSPWord holds the stack pointer at the start of the pending
	// call's block.
	PendSPWord = 8
	// PendRetWord holds, in its low 32 bits, the low half of the return
	// address the pending call pushes.
	PendRetWord = 16
	// ScratchWord holds %rax while a tail jump's trampoline reads the
	// return address its callee will have (appendPend).
	ScratchWord = 24
	// CallWords is the room kept at a slab's start.
	CallWords = 64
)

// CallSlots is how many distinct callers' counts one function's entry keeps
// per thread; CallSlotLen the bytes of a function's slots with the
// overflow word.
const (
	CallSlots   = 16
	CallSlotLen = 16*CallSlots + 8
)

// A Pend has a trampoline record its block's indirect call, or its
// indirect tail jump, as pending.
type Pend struct {
	Key uint32 // the block's key: the offset of its site's counter
	// Delta is the callee's stack pointer at its entry less the block's
	// at its start: the block's pushes and pops before the call or jump,
	// less 8 for a call's return address.
	Delta int32
	// Ret is the low half of the return address the call pushes: the
	// runtime address of the instruction after it.
	Ret uint32
	// Tail says the block leaves by a jump: the callee's return address
	// is the one at its stack pointer, read when the block starts, and
	// the key carries TailKey.
	Tail bool
}

// TailKey marks the key of a pending tail jump (a key is a counter's
// offset, a multiple of 8): an entry of the jump's own function takes it
// for stale (appendEntryCheck), and the monitor clears it to find the
// block (KeySite).
const TailKey = 1

// KeySite returns the counter offset a pending key names.
func KeySite(key uint64) uint64 { return key &^ TailKey }

// EntryDistance returns the distance an entry check expects from a
// pending call's recorded SP to its own after its push of %rax, for a
// block whose callee has delta (Pend.Delta): the push, less delta.
func EntryDistance(delta int32) uint32 { return uint32(int32(8) - delta) }

func (p Pend) distance() uint32 { return EntryDistance(p.Delta) }

// appendPend appends the pending call's stores, which write no flag:
//
//	movl $dist, %gs:PendWord+4    65 c7 04 25 disp32 imm32
//	mov  %rsp, %gs:PendSPWord     65 48 89 24 25 disp32
//	movl $ret, %gs:PendRetWord    65 c7 04 25 disp32 imm32
//	movl $key, %gs:PendWord       65 c7 04 25 disp32 imm32
//
// For a tail jump the return address is read from the stack instead,
// the stack pointer left where it is (a thread between the four is
// stepped on to the key's store):
//
//	mov  %rax, %gs:ScratchWord    65 48 89 04 25 disp32
//	mov  delta(%rsp), %eax        8b 84 24 disp32
//	mov  %eax, %gs:PendRetWord    65 89 04 25 disp32
//	mov  %gs:ScratchWord, %rax    65 48 8b 04 25 disp32
//
// The key last: an entry that runs in between (a signal handler's) sees
// no pending call, or one whose SP is not its caller's. It returns the
// offsets of the stores a thread may be put back from (Counted), and
// the offset of the return address's imm32 (an absolute address of the
// original code's low half), -1 for a tail jump's.
func appendPend(c []byte, p Pend) ([]byte, []int, int) {
	var at []int
	ret := -1
	at = append(at, len(c))
	c = append(c, 0x65, 0xc7, 0x04, 0x25)
	c = binary.LittleEndian.AppendUint32(c, PendWord+4)
	c = binary.LittleEndian.AppendUint32(c, p.distance())
	at = append(at, len(c))
	c = append(c, 0x65, 0x48, 0x89, 0x24, 0x25)
	c = binary.LittleEndian.AppendUint32(c, PendSPWord)
	at = append(at, len(c))
	key := p.Key
	if p.Tail {
		key |= TailKey
		c = append(c, 0x65, 0x48, 0x89, 0x04, 0x25) // mov %rax, %gs:ScratchWord
		c = binary.LittleEndian.AppendUint32(c, ScratchWord)
		c = append(c, 0x8b, 0x84, 0x24) // mov delta(%rsp), %eax
		c = binary.LittleEndian.AppendUint32(c, uint32(p.Delta))
		c = append(c, 0x65, 0x89, 0x04, 0x25) // mov %eax, %gs:PendRetWord
		c = binary.LittleEndian.AppendUint32(c, PendRetWord)
		c = append(c, 0x65, 0x48, 0x8b, 0x04, 0x25) // mov %gs:ScratchWord, %rax
		c = binary.LittleEndian.AppendUint32(c, ScratchWord)
	} else {
		c = append(c, 0x65, 0xc7, 0x04, 0x25)
		c = binary.LittleEndian.AppendUint32(c, PendRetWord)
		ret = len(c)
		c = binary.LittleEndian.AppendUint32(c, p.Ret)
	}
	at = append(at, len(c))
	c = append(c, 0x65, 0xc7, 0x04, 0x25)
	c = binary.LittleEndian.AppendUint32(c, PendWord)
	c = binary.LittleEndian.AppendUint32(c, key)
	return c, at, ret
}

// An EntryCheck has a function entry's trampoline count the pending call
// that entered it, in the slots at Slots (a slab offset, CallSlotLen
// bytes).
type EntryCheck struct {
	Slots uint32
	// Lo and Hi bound the keys of the entry's own function's blocks
	// ([Lo, Hi)): a tail jump pending from one of them is stale (the
	// callee it jumped to was not counted and has returned to the
	// function's caller, which calls the function again), and the check
	// clears it uncounted.
	Lo, Hi uint32
	// Trap stops the thread at an int3 when the calling key finds every
	// slot taken, for the monitor to count it (Trampoline.CallOverflow);
	// without, the call goes to the overflow word after the slots.
	Trap bool
}

// appendEntryCheck appends the entry check and returns, by offset from
// the check's start, the Rewind of each instruction after its first up to
// the count, and the offset after its int3 (Trampoline.CallOverflow; 0
// without EntryCheck.Trap, where an overflow word takes the call):
//
//	    cmpl $0, %gs:PendWord          no call pending: on to the count
//	    je   done
//	    push %rax
//	    mov  %gs:PendSPWord, %rax
//	    sub  %rsp, %rax                the distance
//	    cmp  %gs:PendWord+4, %eax      the one expected?
//	    jne  clear
//	    mov  8(%rsp), %eax             the return address's low half
//	    cmp  %gs:PendRetWord, %eax     the call's?
//	    jne  clear
//	    mov  %gs:PendWord, %eax        the key
//	    test $TailKey, %al             a tail jump's
//	    jz   mine
//	    cmp  $LO, %eax                 from a block of this function?
//	    jb   mine
//	    cmp  $HI, %eax
//	    jb   clear                     stale: not counted
//	mine:
//	    push %rcx
//	    mov  $SLOTS, %ecx
//	next:
//	    cmp  %rax, %gs:(%rcx)          this caller's slot
//	    je   hit
//	    cmpq $0, %gs:(%rcx)            a free one
//	    je   take
//	    add  $16, %ecx
//	    cmp  $SLOTS+16*CallSlots, %ecx
//	    jb   next
//	    int3                           all taken: the monitor counts it
//	                                   (addq $1, %gs:(%rcx) without Trap:
//	                                   the overflow word)
//	    jmp  pop
//	take:
//	    mov  %rax, %gs:(%rcx)
//	hit:
//	    addq $1, %gs:8(%rcx)
//	pop:
//	    pop  %rcx
//	clear:
//	    movq $0, %gs:PendWord          no longer pending
//	    pop  %rax
//	done:
//
// The pending word is cleared after the count. A thread stopped before
// the count is put back at the site with its registers from the stack
// (Trampoline.Rewind) and finds the call still pending: it counts it
// once, when it runs the check again (a slot it took holds the key and
// is found). After the count no point has an equivalent (Where says
// Inside): the monitor steps the thread on to the counter update, a few
// instructions.
func appendEntryCheck(c []byte, e EntryCheck) ([]byte, map[int]Rewind, int) {
	start := len(c)
	rw := map[int]Rewind{}
	none := Rewind{}
	rax := Rewind{SP: 8, Saved: []x86asm.Reg{x86asm.RAX}}
	both := Rewind{SP: 16, Saved: []x86asm.Reg{x86asm.RCX, x86asm.RAX}}
	at := func(r Rewind) { rw[len(c)-start] = r }
	u32 := func(v uint32) { c = binary.LittleEndian.AppendUint32(c, v) }
	gsAbs := func(prefix ...byte) { c = append(c, 0x65); c = append(c, prefix...) }

	gsAbs(0x83, 0x3c, 0x25) // cmpl $0, %gs:PendWord
	u32(PendWord)
	c = append(c, 0)
	at(none)
	c = append(c, 0x74, 0) // je done
	jeDone := len(c) - 1
	at(none)
	c = append(c, 0x50) // push %rax
	at(rax)
	gsAbs(0x48, 0x8b, 0x04, 0x25) // mov %gs:PendSPWord, %rax
	u32(PendSPWord)
	at(rax)
	c = append(c, 0x48, 0x29, 0xe0) // sub %rsp, %rax
	at(rax)
	gsAbs(0x3b, 0x04, 0x25) // cmp %gs:PendWord+4, %eax
	u32(PendWord + 4)
	at(rax)
	c = append(c, 0x75, 0) // jne clear
	jneClear := len(c) - 1
	at(rax)
	c = append(c, 0x8b, 0x44, 0x24, 0x08) // mov 8(%rsp), %eax
	at(rax)
	gsAbs(0x3b, 0x04, 0x25) // cmp %gs:PendRetWord, %eax
	u32(PendRetWord)
	at(rax)
	c = append(c, 0x75, 0) // jne clear
	jneRet := len(c) - 1
	at(rax)
	gsAbs(0x8b, 0x04, 0x25) // mov %gs:PendWord, %eax
	u32(PendWord)
	at(rax)
	c = append(c, 0xa8, TailKey) // test $TailKey, %al
	at(rax)
	c = append(c, 0x74, 0) // jz mine
	jzMine := len(c) - 1
	at(rax)
	c = append(c, 0x3d) // cmp $LO, %eax
	u32(e.Lo)
	at(rax)
	c = append(c, 0x72, 0) // jb mine
	jbMine := len(c) - 1
	at(rax)
	c = append(c, 0x3d) // cmp $HI, %eax
	u32(e.Hi)
	at(rax)
	c = append(c, 0x72, 0) // jb clear
	jbStale := len(c) - 1
	at(rax)
	mine := len(c)
	c = append(c, 0x51) // push %rcx
	at(both)
	c = append(c, 0xb9) // mov $SLOTS, %ecx
	u32(e.Slots)
	at(both)
	next := len(c)
	gsAbs(0x48, 0x39, 0x01) // cmp %rax, %gs:(%rcx)
	at(both)
	c = append(c, 0x74, 0) // je hit
	jeHit := len(c) - 1
	at(both)
	gsAbs(0x48, 0x83, 0x39, 0x00) // cmpq $0, %gs:(%rcx)
	at(both)
	c = append(c, 0x74, 0) // je take
	jeTake := len(c) - 1
	at(both)
	c = append(c, 0x83, 0xc1, 0x10) // add $16, %ecx
	at(both)
	c = append(c, 0x81, 0xf9) // cmp $SLOTS+16*CallSlots, %ecx
	u32(e.Slots + 16*CallSlots)
	at(both)
	c = append(c, 0x72, byte(int8(next-(len(c)+2)))) // jb next
	at(both)
	overflow := 0
	if e.Trap {
		c = append(c, 0xcc) // int3: the monitor counts the call
		overflow = len(c) - start
		// nopl 0(%rax): the check as long as with the add, so that
		// its pushes by offset (Prologue.Pushed) are the same.
		c = append(c, 0x0f, 0x1f, 0x40, 0x00)
	} else {
		gsAbs(0x48, 0x83, 0x01, 0x01) // addq $1, %gs:(%rcx)
	}
	c = append(c, 0xeb, 0) // jmp pop (counted: no Rewind)
	jmpPop := len(c) - 1
	take := len(c)
	at(both)
	gsAbs(0x48, 0x89, 0x01) // mov %rax, %gs:(%rcx)
	hit := len(c)
	at(both)
	gsAbs(0x48, 0x83, 0x41, 0x08, 0x01) // addq $1, %gs:8(%rcx)
	pop := len(c)
	c = append(c, 0x59) // pop %rcx
	clear := len(c)
	gsAbs(0x48, 0xc7, 0x04, 0x25) // movq $0, %gs:PendWord
	u32(PendWord)
	u32(0)
	c = append(c, 0x58) // pop %rax
	done := len(c)
	rel := func(at, to int) { c[at] = byte(int8(to - (at + 1))) }
	rel(jeDone, done)
	rel(jneClear, clear)
	rel(jneRet, clear)
	rel(jzMine, mine)
	rel(jbMine, mine)
	rel(jbStale, clear)
	rel(jeHit, hit)
	rel(jeTake, take)
	rel(jmpPop, pop)
	return c, rw, overflow
}
