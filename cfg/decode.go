package cfg

import (
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// maxInstLen is the architectural limit on an instruction's length.
// Intel SDM vol. 2, 2.1.1 "Instruction Prefixes" (15 bytes).
const maxInstLen = 15

// decodeInst decodes the instruction at the start of code
// (symtab.DecodeInst: x86asm with its ENDBR and VZERO mistakes mended) and
// returns it with its length. It returns x86asm.ErrTruncated for an
// instruction cut off by the end of code and x86asm.ErrUnrecognized for
// bytes that are no instruction.
func decodeInst(code []byte) (x86asm.Inst, int, error) {
	inst, err := symtab.DecodeInst(code)
	if err != nil {
		return inst, 0, err
	}
	return inst, inst.Len, nil
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
