package jump

import (
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"
)

// The plain counter update, addq $1, %gs:OFF, writes the arithmetic flags,
// and a site where they are live (a variable shift, `shl %cl`, whose flags
// a later jcc reads: it leaves them alone when the count is 0, so the
// reading of the flags cannot call them written) would otherwise keep its
// int3, one ptrace stop per hit. There is no flag-free increment of a
// memory word on x86, so such a site's trampoline loads the counter into a
// register, adds with lea and stores it back, saving the register on the
// stack below the red zone (the psABI's 128 bytes under %rsp, which leaf
// code may be using):
//
//	lea -128(%rsp), %rsp       48 8d 64 24 80
//	push %rax                  50
//	mov %gs:OFF, %rax          65 48 8b 04 25 disp32
//	lea 1(%rax), %rax          48 8d 40 01
//	mov %rax, %gs:OFF          65 48 89 04 25 disp32
//	pop %rax                   58
//	lea 128(%rsp), %rsp        48 8d a4 24 80 00 00 00
//
// None of lea, mov, push and pop writes RFLAGS (Intel SDM vol. 2: "Flags
// Affected: None" for each). The counter is still the thread's own, so the
// three steps are exact under threads; a signal cannot run a handler in
// the middle of them while the monitor traces the thread, since it puts a
// thread found there back at the site first (Trampoline.Rewind). It costs
// little more than the add, 0.2-0.6 ns a hit against 0.1-0.5
// (../shared/research, the jump engine study's variants 1 and 5), and 136
// bytes of stack below the red zone, which a C thread has (a signal frame
// needs more) and a Go function that checks its stack bound has (package
// breakpoint decides which sites may). Should patchprof die while
// attached, a handler could run in the middle of the update: it would lose
// a count no one reads, never a register (the handler's frame goes below
// the saved %rax).
//
// Nothing is called, so the stack's alignment does not matter.

// keepCounterLen is the length of the update above.
const keepCounterLen = 37

// redZone is the psABI's red zone below %rsp (System V AMD64 psABI, 3.2.2),
// which the update steps over before it pushes.
const redZone = 128

// appendKeepCounter appends the counter update that writes no flag, for
// the counter at off in the thread's slab, to c.
func appendKeepCounter(c []byte, off uint32) []byte {
	c = append(c, 0x48, 0x8d, 0x64, 0x24, 0x80) // lea -128(%rsp), %rsp
	c = append(c, 0x50)                         // push %rax
	c = append(c, 0x65, 0x48, 0x8b, 0x04, 0x25) // mov %gs:off, %rax
	c = binary.LittleEndian.AppendUint32(c, off)
	c = append(c, 0x48, 0x8d, 0x40, 0x01)       // lea 1(%rax), %rax
	c = append(c, 0x65, 0x48, 0x89, 0x04, 0x25) // mov %rax, %gs:off
	c = binary.LittleEndian.AppendUint32(c, off)
	c = append(c, 0x58)                                     // pop %rax
	return append(c, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0) // lea 128(%rsp), %rsp
}

// A Rewind says how a thread stopped inside a counter update that keeps
// the flags is put back at its site, as it was before the update began.
type Rewind struct {
	// SP is how far the thread's %rsp is below the site's.
	SP uint64
	// Saved are the registers whose program values the update pushed,
	// the one at 0(%rsp) first, then 8(%rsp) and on: the thread's own
	// values of them are the update's.
	Saved []x86asm.Reg
	// Counted says that the counter was written: the hit is to be taken
	// back if the thread is to run the site again.
	Counted bool
}

// savedRAX is the one register the update pushes.
var savedRAX = []x86asm.Reg{x86asm.RAX}

// keepRewinds are the Rewinds at the instructions of the update after its
// first, by offset.
var keepRewinds = map[int]Rewind{
	5:  {SP: redZone},
	6:  {SP: redZone + 8, Saved: savedRAX},
	15: {SP: redZone + 8, Saved: savedRAX},
	19: {SP: redZone + 8, Saved: savedRAX},
	28: {SP: redZone + 8, Saved: savedRAX, Counted: true},
	29: {SP: redZone, Counted: true},
}

// Rewind returns how to put a thread whose PC is pc, inside the
// trampoline's counter update (Where says InCount), back at the site; false
// for any other pc.
func (tr *Trampoline) Rewind(pc uint64) (Rewind, bool) {
	if pc < tr.At {
		return Rewind{}, false
	}
	switch {
	case tr.pre > 0:
		rw, ok := tr.preRw[int(pc-tr.At)]
		return rw, ok
	case tr.keep:
		rw, ok := keepRewinds[int(pc-tr.At)]
		return rw, ok
	case tr.gate:
		rw, ok := gateRewinds[int(pc-tr.At)]
		return rw, ok
	}
	return Rewind{}, false
}
