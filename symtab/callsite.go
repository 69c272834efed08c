package symtab

import "golang.org/x/arch/x86/x86asm"

// IsReturnAddress reports whether addr (link-time) directly follows a call
// instruction in the executable's code, so a stack word holding it is likely a
// return address. A crash inside a library (abort, say) is reported at the
// innermost such frame of the program. Call encodings are 2 to 7 bytes long
// (Intel SDM vol. 2, CALL: E8 rel32, FF /2 with ModRM, SIB, displacement and
// prefixes).
func (f *File) IsReturnAddress(addr uint64) bool {
	for n := 2; n <= 7; n++ {
		if addr < uint64(n) {
			return false
		}
		code, ok := f.Code(addr-uint64(n), n)
		if !ok {
			continue
		}
		inst, err := x86asm.Decode(code, 64)
		if err == nil && inst.Len == n && inst.Op == x86asm.CALL {
			return true
		}
	}
	return false
}
