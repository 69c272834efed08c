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
		if n := cetLen(code[off:]); n > 0 {
			starts = append(starts, addr+uint64(off))
			off += n
			continue
		}
		inst, derr := x86asm.Decode(code[off:], 64)
		if derr != nil {
			return starts, &DecodeError{Addr: addr + uint64(off), Err: derr}
		}
		if inst.Op == 0 || inst.Len <= 0 {
			// x86asm reports bytes it cannot decode, or an instruction cut
			// off by the end of code, as a one-byte pseudo-instruction with
			// no opcode (like objdump's "(bad)") and a nil error.
			return starts, &DecodeError{Addr: addr + uint64(off), Err: badOpError(code[off:])}
		}
		starts = append(starts, addr+uint64(off))
		off += inst.Len
	}
	return starts, nil
}

// cetLen returns 4 for ENDBR64 (F3 0F 1E FA) and ENDBR32 (F3 0F 1E FB), which
// x86asm does not know, and 0 otherwise. Code built with -fcf-protection (the
// default of several distributions' compilers, and glibc's own) starts every
// function with ENDBR64 (Intel SDM vol. 2, ENDBR64).
func cetLen(b []byte) int {
	if len(b) >= 4 && b[0] == 0xF3 && b[1] == 0x0F && b[2] == 0x1E && (b[3] == 0xFA || b[3] == 0xFB) {
		return 4
	}
	return 0
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
