package symtab

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// InstructionStarts decodes code, the bytes at link-time address addr,
// linearly as 64-bit x86 instructions and returns the address of every
// instruction start. It stops at the first byte sequence that does not
// decode (or at an instruction cut off by the end of code) and returns the
// starts so far together with a *DecodeError.
//
// Linear decoding is right for compiler output, where a function's code
// has no embedded data; callers only use the starts to check that a
// line-table address begins an instruction.
func InstructionStarts(code []byte, addr uint64) (starts []uint64, err error) {
	off := 0
	defer func() {
		// x86asm is not documented to panic, but a decoder bug must not
		// take patchprof down with it.
		if p := recover(); p != nil {
			err = &DecodeError{Addr: addr + uint64(off), Err: fmt.Errorf("x86asm panicked: %v", p)}
		}
	}()
	starts = make([]uint64, 0, len(code)/4+1)
	for off < len(code) {
		inst, derr := DecodeInst(code[off:])
		if derr != nil {
			return starts, &DecodeError{Addr: addr + uint64(off), Err: derr}
		}
		starts = append(starts, addr+uint64(off))
		off += inst.Len
	}
	return starts, nil
}

// DecodeInst decodes the 64-bit instruction at the start of code with
// x86asm, mended where x86asm v0.33 is wrong, for every package that walks
// machine code (symtab, cfg, breakpoint's relocation):
//
//   - ENDBR64 and ENDBR32 (IsENDBR), which it does not know, come back as
//     4-byte NOPs;
//   - VZEROUPPER and VZEROALL (IsVZERO), to which it gives length 4, which
//     desynchronises the decoding of the code after them, come back with
//     length 3;
//   - bytes it cannot decode, and an instruction cut off by the end of
//     code, which it reports as a one-byte pseudo-instruction with no
//     opcode and a nil error (like objdump's "(bad)"), give
//     x86asm.ErrUnrecognized and x86asm.ErrTruncated.
//
// On success inst.Len is the instruction's length, at most len(code).
func DecodeInst(code []byte) (x86asm.Inst, error) {
	if IsENDBR(code) {
		return x86asm.Inst{Op: x86asm.NOP, Len: 4, Mode: 64}, nil
	}
	if IsVZERO(code) {
		return x86asm.Inst{Op: x86asm.VZEROUPPER, Len: 3, Mode: 64}, nil
	}
	inst, err := x86asm.Decode(code, 64)
	if err != nil {
		return inst, err
	}
	if inst.Op == 0 || inst.Len <= 0 || inst.Len > len(code) {
		return inst, badOpError(code)
	}
	return inst, nil
}

// IsENDBR reports whether b starts with ENDBR64 (F3 0F 1E FA) or ENDBR32
// (F3 0F 1E FB). Code built with -fcf-protection (the default of several
// distributions' compilers, and glibc's own) starts every function with
// ENDBR64 (Intel SDM vol. 2, ENDBR64).
func IsENDBR(b []byte) bool {
	return len(b) >= 4 && b[0] == 0xF3 && b[1] == 0x0F && b[2] == 0x1E && (b[3] == 0xFA || b[3] == 0xFB)
}

// IsVZERO reports whether b starts with VZEROUPPER (C5 F8 77) or VZEROALL
// (C5 FC 77) in their two-byte VEX form; Go's assembly functions end their
// AVX loops with VZEROUPPER.
func IsVZERO(b []byte) bool {
	return len(b) >= 3 && b[0] == 0xC5 && (b[1] == 0xF8 || b[1] == 0xFC) && b[2] == 0x77
}

// maxInstLen is the architectural limit on an instruction's length.
// Intel SDM vol. 2, 2.1.1 "Instruction Prefixes" (15 bytes).
const maxInstLen = 15

// badOpError tells a truncated instruction from an invalid one: the bytes
// are a truncated instruction if they decode once padded to maxInstLen.
func badOpError(rest []byte) error {
	if len(rest) < maxInstLen {
		padded := make([]byte, maxInstLen)
		copy(padded, rest)
		if inst, err := x86asm.Decode(padded, 64); err == nil && inst.Op != 0 && inst.Len > len(rest) {
			return x86asm.ErrTruncated
		}
	}
	return x86asm.ErrUnrecognized
}
