package breakpoint

import (
	"encoding/binary"
	"fmt"
)

// Some functions' edges do not all follow from their block counts: two
// conditional jumps to the same two blocks (a loop entered by a test and
// closed by another, `if (n > 0) do ... while (--n > 0)`) leave one arc
// free, and the in-process engine, which counts blocks, would keep every
// site of such a function a breakpoint. gcov counts the arcs off a
// spanning tree for the same reason. Here one arc of a conditional jump is
// counted in the target: the block that ends in the jump displaces all of
// its bytes into its trampoline, whose relocated jcc counts the arc on its
// way (PlanJumps picks the arcs, edgeplan.go).

// An EdgeCount asks a trampoline to count one arc of the conditional jump
// that ends its displaced instructions.
type EdgeCount struct {
	Counter uint32 // offset of the arc's counter in a thread's slab
	Taken   bool   // the arc to the jump's target; else the fall-through
}

// countArc rewrites d, a relocated conditional jump (FormCond: jcc rel32
// to the target, jmp rel32 back to the next instruction), to count one of
// its arcs:
//
//	fall-through:  jcc TARGET; addq $1, %gs:C; jmp NEXT
//	taken:         jcc 1f; jmp NEXT; 1: addq $1, %gs:C; jmp TARGET
//
// A thread at the counter update has left the jump and not yet been
// counted: no original point is equivalent (Resume says so), and the
// monitor steps it past the update; one at the jmp after it is at the
// arc's destination.
func countArc(d *Displaced, ec EdgeCount) (*Displaced, error) {
	if d.Form != FormCond || len(d.Code) != 11 || d.Code[0] != 0x0F || d.Code[6] != 0xE9 {
		return nil, &RelocateError{Addr: d.Addr, Reason: "the arc to count is not a conditional jump's"}
	}
	slot := d.Slot
	target := slot + 6 + uint64(int64(int32(binary.LittleEndian.Uint32(d.Code[2:6]))))
	next := d.Addr + uint64(d.Len)
	cc := d.Code[1]
	counter := []byte{0x65, 0x48, 0x83, 0x04, 0x25, 0, 0, 0, 0, 0x01}
	binary.LittleEndian.PutUint32(counter[5:], ec.Counter)
	var c []byte
	jmp := func(op []byte, to uint64) error {
		c = append(c, op...)
		rel, ok := rel32(to, slot+uint64(len(c))+4)
		if !ok {
			return &RelocateError{Addr: d.Addr, Reason: fmt.Sprintf("%s: %#x", ReasonOutOfRange, to)}
		}
		c = binary.LittleEndian.AppendUint32(c, uint32(rel))
		return nil
	}
	nd := &Displaced{Addr: d.Addr, Slot: slot, Len: d.Len, Form: FormCond, RIPRelative: d.RIPRelative}
	if ec.Taken {
		stub := slot + 6 + JumpLen
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
		nd.resume = []resumePoint{{0, d.Addr}, {6, next}, {uint8(back), target}}
	} else {
		if err := jmp([]byte{0x0F, cc}, target); err != nil {
			return nil, err
		}
		c = append(c, counter...)
		back := len(c)
		if err := jmp([]byte{0xE9}, next); err != nil {
			return nil, err
		}
		nd.resume = []resumePoint{{0, d.Addr}, {uint8(back), next}}
	}
	nd.Code = c
	return nd, nil
}
