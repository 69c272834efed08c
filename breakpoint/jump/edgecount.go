package jump

import (
	"encoding/binary"
	"fmt"

	"github.com/patchprof/patchprof/breakpoint/relocate"
	"golang.org/x/arch/x86/x86asm"
)

// Some functions' edges do not all follow from their block counts: two
// conditional jumps to the same two blocks (a loop entered by a test and
// closed by another, `if (n > 0) do ... while (--n > 0)`) leave one arc
// free, and the in-process engine, which counts blocks, would keep every
// site of such a function a breakpoint. gcov counts the arcs off a
// spanning tree for the same reason. Here one arc of a conditional jump is
// counted in the target: the block that ends in the jump displaces all of
// its bytes into its trampoline, whose relocated jcc counts the arc on its
// way (package breakpoint picks the arcs: Plan.PlanJumps).

// An EdgeCount asks a trampoline to count one arc of the conditional jump
// that ends its displaced instructions.
type EdgeCount struct {
	Counter uint32 // offset of the arc's counter in a thread's slab
	Taken   bool   // the arc to the jump's target; else the fall-through
	// Table, for a jump through a register (a jump table's dispatch), is
	// the runtime address of the arc's target: the trampoline counts the
	// jumps that go there.
	Table uint64
}

// countArc rewrites d, a relocated conditional jump (relocate.FormCond:
// jcc rel32 to the target, jmp rel32 back to the next instruction), to
// count one of its arcs:
//
//	fall-through:  jcc TARGET; addq $1, %gs:C; jmp NEXT
//	taken:         jcc 1f; jmp NEXT; 1: addq $1, %gs:C; jmp TARGET
//
// A thread at the counter update has left the jump and not yet been
// counted: no original point is equivalent (Resume says so), and the
// monitor steps it past the update; one at the jmp after it is at the
// arc's destination.
func countArc(d *relocate.Displaced, ec EdgeCount) (*relocate.Displaced, error) {
	if d.Form != relocate.FormCond || len(d.Code) != 11 || d.Code[0] != 0x0F || d.Code[6] != 0xE9 {
		return nil, &relocate.Error{Addr: d.Addr, Reason: "the arc to count is not a conditional jump's"}
	}
	slot := d.Slot
	target := slot + 6 + uint64(int64(int32(binary.LittleEndian.Uint32(d.Code[2:6]))))
	next := d.Addr + uint64(d.Len)
	cc := d.Code[1]
	counter := appendCounter(nil, ec.Counter)
	var c []byte
	var exits []relocate.Exit
	jmp := func(op []byte, to uint64) error {
		c = append(c, op...)
		if to != slot+6+JmpLen { // the taken side's stub is not an exit
			exits = append(exits, relocate.Exit{Off: uint8(len(c)), To: to})
		}
		rel, ok := relocate.Rel32(to, slot+uint64(len(c))+4)
		if !ok {
			return &relocate.Error{Addr: d.Addr, Reason: fmt.Sprintf("%s: %#x", relocate.ReasonOutOfRange, to)}
		}
		c = binary.LittleEndian.AppendUint32(c, uint32(rel))
		return nil
	}
	nd := &relocate.Displaced{Addr: d.Addr, Slot: slot, Len: d.Len, Form: relocate.FormCond, RIPRelative: d.RIPRelative}
	if ec.Taken {
		stub := slot + 6 + JmpLen
		if err := jmp([]byte{0x0F, cc}, stub); err != nil {
			return nil, err
		}
		if err := jmp([]byte{0xE9}, next); err != nil {
			return nil, err
		}
		c = append(c, counter...)
		back := len(c)
		if err := jmp([]byte{0xE9}, target); err != nil {
			return nil, err
		}
		nd.ResumePoints = []relocate.ResumePoint{{Off: 0, To: d.Addr}, {Off: 6, To: next}, {Off: uint8(back), To: target}}
	} else {
		if err := jmp([]byte{0x0F, cc}, target); err != nil {
			return nil, err
		}
		c = append(c, counter...)
		back := len(c)
		if err := jmp([]byte{0xE9}, next); err != nil {
			return nil, err
		}
		nd.ResumePoints = []relocate.ResumePoint{{Off: 0, To: d.Addr}, {Off: uint8(back), To: next}}
	}
	nd.Code, nd.Exits = c, exits
	return nd, nil
}

// countArcs rewrites d to count the arcs ecs: one arc of a conditional
// jump (countArc), or arcs of a jump table's dispatch (countTableArcs).
func countArcs(d *relocate.Displaced, ecs []EdgeCount) (*relocate.Displaced, error) {
	if ecs[0].Table != 0 {
		return countTableArcs(d, ecs)
	}
	if len(ecs) != 1 {
		return nil, &relocate.Error{Addr: d.Addr, Reason: "more than one arc of a conditional jump to count"}
	}
	return countArc(d, ecs[0])
}

// countTableArcs rewrites d, a copied jmp through a 64-bit register (a
// jump table's dispatch, relocate.FormTransfer), to count the jumps to each
// arc's target (ec.Table):
//
//	cmp T1(%rip), %reg; jne 1f; addq $1, %gs:C1; 1:
//	...
//	jmp *%reg; T1: .quad TARGET1 ...
//
// The cmps write the flags, which must be dead at every target of the
// table. A thread at a cmp, a jne or the jmp is at the original jmp (the
// flags it finds there are dead, and the arcs it has passed were counted
// or not its own); one at a counter update has chosen its arc and not been
// counted (no equivalent).
func countTableArcs(d *relocate.Displaced, ecs []EdgeCount) (*relocate.Displaced, error) {
	inst, err := relocate.Decode(d.Code)
	reg, isReg := inst.Args[0].(x86asm.Reg)
	if err != nil || d.Form != relocate.FormTransfer || inst.Op != x86asm.JMP || !isReg || reg < x86asm.RAX || reg > x86asm.R15 || inst.Len != len(d.Code) {
		return nil, &relocate.Error{Addr: d.Addr, Reason: "the arcs to count are not a jump through a register's"}
	}
	n := byte(reg - x86asm.RAX)
	const cmpLen, jneLen = 7, 2
	const step = cmpLen + jneLen + counterLen
	jmpAt := step * len(ecs)
	quads := jmpAt + len(d.Code)
	if quads+8*len(ecs) > 255 {
		return nil, &relocate.Error{Addr: d.Addr, Reason: "too many arcs to count"}
	}
	c := make([]byte, 0, quads+8*len(ecs))
	nd := &relocate.Displaced{Addr: d.Addr, Slot: d.Slot, Len: d.Len, Form: relocate.FormTransfer}
	for k, ec := range ecs {
		at := len(c)
		// REX.W (and R for r8-r15), CMP r64, r/m64 (3B /r), ModRM 00
		// reg 101: RIP-relative (Intel SDM vol. 2, CMP; 2.2.1.6).
		c = append(c, 0x48|(n>>3)<<2, 0x3B, (n&7)<<3|5)
		c = binary.LittleEndian.AppendUint32(c, uint32(quads+8*k-(at+cmpLen)))
		c = append(c, 0x75, counterLen) // jne over the counter
		c = appendCounter(c, ec.Counter)
		nd.ResumePoints = append(nd.ResumePoints, relocate.ResumePoint{Off: uint8(at), To: d.Addr}, relocate.ResumePoint{Off: uint8(at + cmpLen), To: d.Addr})
	}
	c = append(c, d.Code...)
	for _, ec := range ecs {
		nd.Abs = append(nd.Abs, relocate.AbsWord{Lo: len(c), Wide: true})
		c = binary.LittleEndian.AppendUint64(c, ec.Table)
	}
	nd.ResumePoints = append(nd.ResumePoints, relocate.ResumePoint{Off: uint8(jmpAt), To: d.Addr})
	nd.Code = c
	return nd, nil
}
