package cfg

import "golang.org/x/arch/x86/x86asm"

// maxInstLen is the architectural limit on an instruction's length.
// Intel SDM vol. 2, 2.1.1 "Instruction Prefixes" (15 bytes).
const maxInstLen = 15

// endbr is ENDBR64 as x86asm returns it: a NOP of length 4.
var endbr = x86asm.Inst{Op: x86asm.NOP, Len: 4, Mode: 64}

// vzero stands for VZEROUPPER and VZEROALL, which touch no general
// register.
var vzero = x86asm.Inst{Op: x86asm.VZEROUPPER, Len: 3, Mode: 64}

// decodeInst decodes the instruction at the start of code. It returns
// x86asm.ErrTruncated for an instruction cut off by the end of code and
// x86asm.ErrUnrecognized for bytes that are no instruction.
//
// x86asm v0.33 does not know ENDBR64 (F3 0F 1E FA) and ENDBR32 (F3 0F 1E
// FB), which start every function of code built with -fcf-protection
// (Intel SDM vol. 2, ENDBR64); they are decoded here as 4-byte NOPs, as
// symtab.InstructionStarts does (its cetLen is not exported).
func decodeInst(code []byte) (x86asm.Inst, int, error) {
	if len(code) >= 4 && code[0] == 0xF3 && code[1] == 0x0F && code[2] == 0x1E && (code[3] == 0xFA || code[3] == 0xFB) {
		return endbr, 4, nil
	}
	if len(code) >= 3 && code[0] == 0xC5 && (code[1] == 0xF8 || code[1] == 0xFC) && code[2] == 0x77 {
		// VZEROUPPER, VZEROALL (VEX.128/256.0F 77): x86asm v0.33 gives
		// them length 4 and so desynchronises the code after them (Go's
		// assembly functions end their AVX loops with VZEROUPPER).
		return vzero, 3, nil
	}
	inst, err := x86asm.Decode(code, 64)
	if err != nil {
		return inst, 0, err
	}
	if inst.Op == 0 || inst.Len <= 0 || inst.Len > len(code) {
		// x86asm reports bytes it cannot decode, or an instruction cut
		// off by the end of code, as a one-byte pseudo-instruction with no
		// opcode and a nil error; tell the two apart by padding.
		return inst, 0, badOpError(code)
	}
	return inst, inst.Len, nil
}

// badOpError tells a truncated instruction from an invalid one: the bytes
// are a truncated instruction if they decode once padded to maxInstLen.
func badOpError(rest []byte) error {
	if len(rest) < maxInstLen {
		var padded [maxInstLen]byte
		copy(padded[:], rest)
		if inst, err := x86asm.Decode(padded[:], 64); err == nil && inst.Op != 0 && inst.Len > len(rest) {
			return x86asm.ErrTruncated
		}
	}
	return x86asm.ErrUnrecognized
}

// paddingLen returns the length of the padding instruction at the start
// of code, or 0 if it is not one. Padding is what assemblers put between
// functions and before aligned loop heads: INT3 (Go, and gcc's
// -fcf-protection stubs), NOP in any of its multi-byte forms (gas
// .p2align: 0F 1F /0 with 66 and CS prefixes) and XCHG AX,AX (66 90).
func paddingLen(code []byte) int {
	if len(code) == 0 {
		return 0
	}
	switch code[0] {
	case 0xCC, 0x90:
		return 1
	case 0x0F, 0x66, 0x2E:
		// The multi-byte NOPs start with 0F 1F or with 66 and 2E
		// prefixes; nothing else is worth decoding here.
	default:
		return 0
	}
	inst, n, err := decodeInst(code)
	if err != nil {
		return 0
	}
	switch inst.Op {
	case x86asm.NOP:
		return n
	case x86asm.XCHG:
		if r0, ok := inst.Args[0].(x86asm.Reg); ok && inst.Args[1] == r0 {
			return n
		}
	}
	return 0
}
