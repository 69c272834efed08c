package symtab

import "encoding/binary"

// instLen returns the length of the 64-bit x86 instruction at the start of
// code and, when it is a direct branch or call (Jcc, JMP, CALL, LOOPcc,
// JrCXZ, XBEGIN), its relative displacement. ok is false for an encoding
// it does not know or an instruction cut off by the end of code: the caller
// then asks x86asm. It decodes lengths only, from the opcode maps of the
// Intel SDM vol. 2, appendix A (prefixes, REX, VEX, EVEX, ModRM, SIB,
// displacements and immediates), about ten times faster than a full decode;
// TestInstLenMatchesX86asm holds it to x86asm's lengths on whole binaries.
func instLen(code []byte) (n int, rel int64, isRel, ok bool) {
	i := 0
	opsize16, addr32, rexW := false, false, false
prefixes:
	for ; i < len(code) && i < maxInstLen; i++ {
		switch code[i] {
		case 0xF0, 0xF2, 0xF3, 0x2E, 0x36, 0x3E, 0x26, 0x64, 0x65:
		case 0x66:
			opsize16 = true
		case 0x67:
			addr32 = true
		default:
			break prefixes
		}
	}
	if i < len(code) && code[i]&0xF0 == 0x40 {
		rexW = code[i]&8 != 0
		i++
	}
	if i >= len(code) {
		return 0, 0, false, false
	}
	immz := 4
	if opsize16 && !rexW {
		immz = 2
	}
	op := code[i]
	i++
	var modrm bool
	imm := 0
	relSize := 0
	switch {
	case op == 0x0F:
		var known bool
		if i, modrm, imm, relSize, known = escape0F(code, i); !known {
			return 0, 0, false, false
		}
	case op == 0xC4 || op == 0xC5 || op == 0x62:
		return vexLen(code, i-1)
	default:
		var known bool
		modrm, imm, relSize, known = map1(op, immz, rexW, opsize16, addr32)
		if !known {
			return 0, 0, false, false
		}
	}
	if modrm {
		if i >= len(code) {
			return 0, 0, false, false
		}
		m := code[i]
		if op == 0x8F && m>>3&7 != 0 {
			return 0, 0, false, false // AMD's XOP, not POP r/m
		}
		i++
		switch op {
		case 0xF6:
			if m>>3&7 < 2 {
				imm = 1 // TEST r/m8, imm8
			}
		case 0xF7:
			if m>>3&7 < 2 {
				imm = immz
			}
		}
		var ok bool
		if i, ok = modrmTail(code, i, m); !ok {
			return 0, 0, false, false
		}
		if op == 0xC7 && m == 0xF8 {
			relSize, imm = immz, 0 // XBEGIN rel32
		}
	}
	i += imm
	if relSize > 0 {
		if i+relSize > len(code) {
			return 0, 0, false, false
		}
		rel = relAt(code[i:], relSize)
		i += relSize
		isRel = true
	}
	if i > len(code) || i > maxInstLen {
		return 0, 0, false, false
	}
	return i, rel, isRel, true
}

// escape0F describes the opcode after the escape byte 0F, at code[i]:
// it returns where what follows the opcode starts, whether a ModRM byte
// follows, the immediate's size, and the size of a relative displacement
// (Jcc rel32). known is false for an opcode it does not know or one cut
// off by the end of code.
func escape0F(code []byte, i int) (next int, modrm bool, imm, relSize int, known bool) {
	if i >= len(code) {
		return 0, false, 0, 0, false
	}
	op := code[i]
	i++
	switch {
	case op == 0x38:
		return i + 1, true, 0, 0, true // the third opcode byte
	case op == 0x3A:
		return i + 1, true, 1, 0, true
	case op >= 0x80 && op <= 0x8F:
		return i, false, 0, 4, true
	}
	modrm, imm, known = map0F(op)
	return i, modrm, imm, 0, known
}

// relAt returns the little-endian signed displacement of size bytes (1,
// 2 or 4) at the start of b.
func relAt(b []byte, size int) int64 {
	switch size {
	case 1:
		return int64(int8(b[0]))
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b)))
	}
	return int64(int32(binary.LittleEndian.Uint32(b)))
}

// modrmTail steps over the SIB byte and displacement that ModRM byte m
// (read just before i) calls for, in 64-bit mode.
func modrmTail(code []byte, i int, m byte) (int, bool) {
	mod, rm := m>>6, m&7
	if mod == 3 {
		return i, true
	}
	if rm == 4 {
		if i >= len(code) {
			return 0, false
		}
		if mod == 0 && code[i]&7 == 5 {
			i += 4 // no base: disp32
		}
		i++
	}
	switch {
	case mod == 0 && rm == 5:
		i += 4 // RIP-relative disp32
	case mod == 1:
		i++
	case mod == 2:
		i += 4
	}
	return i, true
}

// map1 describes the one-byte opcode op: whether a ModRM byte follows, the
// immediate's size, and the size of a relative displacement.
func map1(op byte, immz int, rexW, opsize16, addr32 bool) (modrm bool, imm, rel int, known bool) {
	switch {
	case op < 0x40:
		switch op & 7 {
		case 0, 1, 2, 3:
			return true, 0, 0, true
		case 4:
			return false, 1, 0, true
		case 5:
			return false, immz, 0, true
		}
		return false, 0, 0, false // segment pushes, DAA...: invalid in 64-bit mode
	case op >= 0x50 && op <= 0x5F, op >= 0x90 && op <= 0x99, op >= 0x9B && op <= 0x9F,
		op >= 0xA4 && op <= 0xA7, op >= 0xAA && op <= 0xAF, op >= 0x6C && op <= 0x6F,
		op == 0xC3, op == 0xC9, op == 0xCB, op == 0xCC, op == 0xCF, op == 0xD7,
		op >= 0xEC && op <= 0xEF, op == 0xF1, op == 0xF4, op == 0xF5, op >= 0xF8 && op <= 0xFD:
		return false, 0, 0, true
	case op == 0x63, op >= 0x84 && op <= 0x8F && op != 0x8F, op >= 0xD0 && op <= 0xD3,
		op >= 0xD8 && op <= 0xDF, op == 0xFE, op == 0xFF, op == 0xF6, op == 0xF7:
		return true, 0, 0, true
	case op == 0x8F:
		return true, 0, 0, true // POP r/m (XOP is AMD-only: left to x86asm)
	case op == 0x68:
		return false, immz, 0, true
	case op == 0x69:
		return true, immz, 0, true
	case op == 0x6A, op == 0xCD, op >= 0xE4 && op <= 0xE7, op == 0xA8:
		return false, 1, 0, true
	case op == 0x6B, op == 0x80, op == 0x83, op == 0xC0, op == 0xC1, op == 0xC6:
		return true, 1, 0, true
	case op == 0x81, op == 0xC7:
		return true, immz, 0, true
	case op >= 0x70 && op <= 0x7F, op >= 0xE0 && op <= 0xE3, op == 0xEB:
		return false, 0, 1, true
	case op == 0xE8 || op == 0xE9:
		return false, 0, 4, true
	case op >= 0xA0 && op <= 0xA3:
		if addr32 {
			return false, 4, 0, true
		}
		return false, 8, 0, true
	case op == 0xA9:
		return false, immz, 0, true
	case op >= 0xB0 && op <= 0xB7:
		return false, 1, 0, true
	case op >= 0xB8 && op <= 0xBF:
		switch {
		case rexW:
			return false, 8, 0, true
		case opsize16:
			return false, 2, 0, true
		}
		return false, 4, 0, true
	case op == 0xC2 || op == 0xCA:
		return false, 2, 0, true
	case op == 0xC8:
		return false, 3, 0, true
	}
	return false, 0, 0, false
}

// map0F describes the two-byte opcode 0F op (other than 0F 38, 0F 3A and
// Jcc rel32).
func map0F(op byte) (modrm bool, imm int, known bool) {
	switch {
	case op == 0x05, op == 0x06, op == 0x07, op == 0x08, op == 0x09, op == 0x0B,
		op == 0x0E, op >= 0x30 && op <= 0x37, op == 0x77, op >= 0xA0 && op <= 0xA2,
		op == 0xA8, op == 0xA9, op == 0xAA, op >= 0xC8 && op <= 0xCF:
		return false, 0, true
	case op == 0x70, op == 0x71, op == 0x72, op == 0x73, op == 0xA4, op == 0xAC,
		op == 0xBA, op == 0xC2, op == 0xC4, op == 0xC5, op == 0xC6:
		return true, 1, true
	case op <= 0x03, op == 0x0D, op >= 0x10 && op <= 0x23, op >= 0x28 && op <= 0x2F,
		op >= 0x40 && op <= 0x76, op == 0x7C, op == 0x7D, op == 0x7E, op == 0x7F,
		op >= 0x90 && op <= 0x9F, op == 0xA3, op == 0xA5, op == 0xAB, op >= 0xAD && op <= 0xC1,
		op == 0xC3, op == 0xC7, op >= 0xD0:
		return true, 0, true
	}
	return false, 0, false
}

// vexLen decodes the length of a VEX (C4, C5) or EVEX (62) instruction
// starting at code[p]: the prefix, the opcode, a ModRM byte (except VEX
// 0F 77, VZEROUPPER and VZEROALL), and an imm8 in map 0F3A and for the
// imm8 opcodes of map 0F.
func vexLen(code []byte, p int) (n int, rel int64, isRel, ok bool) {
	var m byte // the opcode map: 1 = 0F, 2 = 0F38, 3 = 0F3A
	i := p
	switch code[p] {
	case 0xC5:
		m, i = 1, p+2
	case 0xC4:
		if p+1 >= len(code) {
			return 0, 0, false, false
		}
		m, i = code[p+1]&0x1F, p+3
	case 0x62:
		if p+1 >= len(code) {
			return 0, 0, false, false
		}
		m, i = code[p+1]&7, p+4
	}
	if i >= len(code) {
		return 0, 0, false, false
	}
	op := code[i]
	i++
	imm := 0
	switch m {
	case 1:
		if op == 0x77 && code[p] != 0x62 {
			return i, 0, false, true
		}
		switch op {
		case 0x70, 0x71, 0x72, 0x73, 0xC2, 0xC4, 0xC5, 0xC6:
			imm = 1
		}
	case 2, 5, 6:
	case 3:
		imm = 1
	default:
		return 0, 0, false, false
	}
	if i >= len(code) {
		return 0, 0, false, false
	}
	mb := code[i]
	i++
	i, ok = modrmTail(code, i, mb)
	if !ok {
		return 0, 0, false, false
	}
	i += imm
	if i > len(code) || i > maxInstLen {
		return 0, 0, false, false
	}
	return i, 0, false, true
}
