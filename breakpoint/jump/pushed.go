package jump

import (
	"sync"

	"golang.org/x/arch/x86/x86asm"
)

// A Prologue is what a trampoline runs at its start that moves the stack
// pointer below the site's: an entry check (appendEntryCheck, which pushes
// %rax and %rcx) or the counter update that keeps the flags (which steps
// below the red zone and pushes %rax). Both are laid out the same in
// every trampoline that has them, so how far a thread's stack pointer is
// below its site's follows from its offset in the trampoline alone: a
// sampled call chain is unwound from the site's own (its CFI describes
// the site, not the trampoline's pushes).
type Prologue uint8

const (
	PrologueNone       Prologue = iota // the plain counter update: nothing pushed
	PrologueEntryCheck                 // an entry check before the plain update
	PrologueKeepFlags                  // the update that keeps the flags
)

// Pushed returns how many bytes below the site's stack pointer a thread
// at offset off of a trampoline with prologue p has its own: 0 outside
// the prologue.
func (p Prologue) Pushed(off int) uint64 {
	switch p {
	case PrologueEntryCheck:
		return entryCheckDepth()[off]
	case PrologueKeepFlags:
		return keepRewinds[off].SP
	}
	return 0
}

// entryCheckDepth returns, by offset, how far the entry check's pushes
// have moved the stack pointer at each of its instructions: its code read
// in address order, every path through it reaching an offset with the
// same pushes (TestEntryCheckDepth).
var entryCheckDepth = sync.OnceValue(func() map[int]uint64 {
	c, _, _ := appendEntryCheck(nil, EntryCheck{})
	depth := map[int]uint64{}
	var d uint64
	for off := 0; off < len(c); {
		inst, err := x86asm.Decode(c[off:], 64)
		if err != nil || inst.Len == 0 {
			return map[int]uint64{}
		}
		if d > 0 {
			depth[off] = d
		}
		switch inst.Op {
		case x86asm.PUSH:
			d += 8
		case x86asm.POP:
			d -= 8
		}
		off += inst.Len
	}
	return depth
})
