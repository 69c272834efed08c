package symtab

import (
	"encoding/binary"
	"slices"
)

// AddressTaken reports, for each function entry, whether the module may
// take its address: it lies in data (the targets of the module's dynamic
// relocations, and in a non-PIE executable the code addresses its other
// segments hold, as Targets reads them), or some four bytes of its code,
// read as an absolute 32-bit address or as a RIP-relative displacement
// that ends there (`lea f(%rip), %rax`, `mov $f, %edi`), give it. Only a
// function whose address the module takes can be entered by an indirect
// call from the module's own code with the address it made; one from
// another module is told by its own.
//
// It over-approximates, as Targets does: four bytes that only look like
// an address (an immediate, the middle of another instruction) keep an
// entry. The result is computed once, at the first call.
func (f *File) AddressTaken() func(addr uint64) bool {
	f.takenOnce.Do(func() { f.taken = f.findTaken() })
	taken := f.taken
	return func(addr uint64) bool {
		_, ok := slices.BinarySearch(taken, addr)
		return ok
	}
}

func (f *File) findTaken() (out []uint64) {
	if len(f.Funcs) == 0 {
		return nil
	}
	lo, hi := f.Funcs[0].Addr, f.Funcs[len(f.Funcs)-1].Addr+1
	// Bit sets over [lo, hi): a bit a byte of code, 1/8 of its size.
	entry := make([]uint64, (hi-lo+63)/64)
	for _, fn := range f.Funcs {
		k := fn.Addr - lo
		entry[k/64] |= 1 << (k % 64)
	}
	mark := make([]uint64, len(entry))
	see := func(a uint64) {
		if k := a - lo; a >= lo && a < hi && entry[k/64]&(1<<(k%64)) != 0 {
			mark[k/64] |= 1 << (k % 64)
		}
	}
	for _, a := range f.dataTargets() {
		see(a)
	}
	for _, s := range f.segs {
		code, ok := f.Code(s.vaddr, int(s.filesz))
		if !ok {
			continue
		}
		for p := 0; p+4 <= len(code); p++ {
			v := binary.LittleEndian.Uint32(code[p:])
			see(uint64(v))
			if !branchRel32(code, p) {
				see(s.vaddr + uint64(p) + 4 + uint64(int64(int32(v))))
			}
		}
	}
	for _, fn := range f.Funcs {
		if k := fn.Addr - lo; mark[k/64]&(1<<(k%64)) != 0 {
			out = append(out, fn.Addr)
		}
	}
	return out
}

// branchRel32 reports whether the four bytes at code[p:] follow the
// opcode of a call, jmp or jcc rel32 (E8, E9, 0F 80-8F): a branch's
// displacement, which takes no address. A RIP-relative operand's ModRM
// byte is never one of these (mod 00, r/m 101).
func branchRel32(code []byte, p int) bool {
	if p < 1 {
		return false
	}
	b := code[p-1]
	return b == 0xE8 || b == 0xE9 || b&0xF0 == 0x80 && p >= 2 && code[p-2] == 0x0F
}
