package jump

import "encoding/binary"

// A jump table's dispatch whose entries share targets (empty cases and
// the default going to one place) cannot tell its entries apart by where
// it jumps; gcov counts each case's arc. A trampoline at the start of the
// dispatch's block, where the table index is in a register, counts the
// entry with an indexed update after the site's own:
//
//	addq $1, %gs:COUNTER            the site's hit
//	addq $1, %gs:ENTRIES(,%reg,8)   the entry's (0x67: a 32-bit index)
//
// Both write the flags: only where they are dead (a site that keeps them
// counts no entry). A thread between the two has counted its hit and not
// its entry: no original point is equivalent (Where says Inside), and the
// monitor steps it on.

// An EntryCount asks a trampoline to count the table entry its dispatch
// takes: the index is in general register Reg (x86 numbering, 0 for %rax
// to 15 for %r15; its low 32 bits unless Wide) where the site starts, and
// entry k's counter is at Counter + 8k in a thread's slab.
type EntryCount struct {
	Counter uint32
	Reg     uint8
	Wide    bool
}

// appendEntryCounter appends the indexed update of ec to c: with GS, and
// for a 32-bit index the address-size override (Intel SDM vol. 2, 2.1.1),
// REX.W (and X for r8-r15), ADD r/m64, imm8 (83 /0 ib), ModRM 00 000 100,
// SIB scale 8, index reg, no base (disp32).
func appendEntryCounter(c []byte, ec EntryCount) []byte {
	c = append(c, 0x65)
	if !ec.Wide {
		c = append(c, 0x67)
	}
	c = append(c, 0x48|(ec.Reg>>3&1)<<1, 0x83, 0x04, 0xC0|(ec.Reg&7)<<3|5)
	c = binary.LittleEndian.AppendUint32(c, ec.Counter)
	return append(c, 0x01)
}
