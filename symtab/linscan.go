package symtab

import "slices"

// ScanJumps decodes the code of one function (at link-time address addr)
// instruction by instruction from its start, with the length decoder
// alone, and returns the targets of its direct jumps and conditional
// branches that lie inside it (not its calls'), sorted and unique: the
// leaders a flow graph would find there other than by falling through,
// for a caller that needs no more of the graph than that (a function
// entry's patch). It returns false when that may not be all a graph would
// find, or the scan cannot tell: an instruction the length decoder does
// not know, an indirect jump (a jump table or a computed goto) or a far
// one, an INT (int3 ends a Go assembly function), or a jump into the
// middle of an instruction. The scan reads bytes the way Targets does, so
// every target it returns is one of Targets.
func ScanJumps(code []byte, addr uint64) ([]uint64, bool) {
	starts := make([]bool, len(code))
	var jumps []uint64
	for off := 0; off < len(code); {
		n, rel, isRel, ok := instLen(code[off:])
		if !ok || n == 0 {
			return nil, false
		}
		starts[off] = true
		op, esc, reg, ok := opcode(code[off : off+n])
		switch {
		case !ok:
			return nil, false
		case !esc && (op == 0xCC || op == 0xCD || op == 0xEA || op == 0x9A):
			return nil, false // INT3, INT n; far jmp and call (invalid in 64-bit mode)
		case !esc && op == 0xFF && (reg == 3 || reg == 4 || reg == 5):
			return nil, false // far call, indirect jmp, far jmp
		case isRel && !(op == 0xE8 && !esc):
			t := addr + uint64(off+n) + uint64(rel)
			if t >= addr && t < addr+uint64(len(code)) {
				jumps = append(jumps, t)
			}
		}
		off += n
	}
	for _, t := range jumps {
		if !starts[t-addr] {
			return nil, false
		}
	}
	slices.Sort(jumps)
	return slices.Compact(jumps), true
}

// opcode returns the opcode byte of the instruction inst (whole, as
// instLen measured it) past its legacy prefixes and REX, whether it is in
// the 0F map (esc), and its ModRM reg field when the one-byte map's FF
// group needs it (a VEX, EVEX or XOP encoding, which holds no branch,
// gives its prefix byte); false when inst ends before its opcode.
func opcode(inst []byte) (op byte, esc bool, reg byte, ok bool) {
	i := 0
	for i < len(inst) {
		switch inst[i] {
		case 0xF0, 0xF2, 0xF3, 0x2E, 0x36, 0x3E, 0x26, 0x64, 0x65, 0x66, 0x67:
			i++
			continue
		}
		break
	}
	if i < len(inst) && inst[i]&0xF0 == 0x40 {
		i++
	}
	if i >= len(inst) {
		return 0, false, 0, false
	}
	switch inst[i] {
	case 0xC4, 0xC5, 0x62, 0x8F:
		// VEX, EVEX and XOP prefixes in 64-bit mode (0x8F is also POP
		// r/m): no branch.
		return inst[i], false, 0, true
	case 0x0F:
		if i+1 >= len(inst) {
			return 0, false, 0, false
		}
		return inst[i+1], true, 0, true
	}
	op = inst[i]
	if op == 0xFF {
		if i+1 >= len(inst) {
			return 0, false, 0, false
		}
		reg = inst[i+1] >> 3 & 7
	}
	return op, false, reg, true
}

// An Ender says how an instruction ends a basic block, as a flow graph
// reads it.
type Ender uint8

const (
	// EndsNot: the instruction does not end its block.
	EndsNot Ender = iota
	// EndsAfter: RET, IRET or a direct JMP; the block ends after it.
	EndsAfter
	// EndsCond: a conditional branch (Jcc, LOOPcc, JrCXZ, XBEGIN); the
	// block ends after it and falls through too.
	EndsCond
	// EndsAt: a near CALL, UD0, UD1, UD2 or HLT: the block ends with it,
	// and a patch displacing the block leaves it in place.
	EndsAt
	// EndsUnknown: an indirect or far jump, INT, or an encoding the
	// length decoder does not know: a flow graph is needed.
	EndsUnknown
)

// EndOf returns the length of the instruction at the start of code and how
// it ends a block, from the length decoder and the opcode alone.
func EndOf(code []byte) (int, Ender) {
	n, _, isRel, ok := instLen(code)
	if !ok || n == 0 {
		return 0, EndsUnknown
	}
	op, esc, reg, ok := opcode(code[:n])
	if !ok {
		return n, EndsUnknown
	}
	if esc {
		switch {
		case op >= 0x80 && op <= 0x8F:
			return n, EndsCond
		case op == 0x0B || op == 0xB9 || op == 0xFF:
			return n, EndsAt
		}
		return n, EndsNot
	}
	switch {
	case op == 0xC3 || op == 0xC2 || op == 0xCB || op == 0xCA || op == 0xCF:
		return n, EndsAfter
	case op == 0xE9 || op == 0xEB:
		return n, EndsAfter
	case op >= 0x70 && op <= 0x7F, op >= 0xE0 && op <= 0xE3:
		return n, EndsCond
	case op == 0xC7 && isRel: // XBEGIN
		return n, EndsCond
	case op == 0xE8, op == 0xF4:
		return n, EndsAt
	case op == 0xFF && reg == 2:
		return n, EndsAt // call through a register or memory
	case op == 0xFF && (reg == 3 || reg == 4 || reg == 5), op == 0xCC, op == 0xCD, op == 0xEA, op == 0x9A:
		return n, EndsUnknown
	}
	return n, EndsNot
}
