package linemodel

import (
	"bytes"
	"encoding/binary"

	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// An inMemory is the set of a function's locals that are no registers of
// GIMPLE's, so that their scope ends their lifetimes with clobbers:
// aggregates, and variables whose frame slot's address the code takes
// (a macro may take it where the source shows no &): per name, the lines
// that declare one.
type inMemory map[string][]int

// declares reports whether scope s declares one of mem's variables.
func (mem inMemory) declares(s scope) bool {
	for _, name := range s.names {
		for _, l := range mem[name] {
			if s.open <= l && l <= s.close {
				return true
			}
		}
	}
	return false
}

// localsInMemory returns the inMemory of a function: its DWARF locals that
// are aggregates or whose frame slot is the operand of a lea (-O0 keeps
// every local in the frame, addressed from %rbp, which is the CFA less
// 16 after the prologue). code is the function's, from base.
func localsInMemory(locals []lineinfo.Local, code []byte) inMemory {
	if len(locals) == 0 {
		return nil
	}
	// Decoding the whole function was a ninth of the model's time: decode
	// only up to the last lea that may take the frame slot of a local not
	// known to be in memory, and only until each such slot is found.
	want := map[int64]bool{}
	for _, l := range locals {
		if !l.Aggregate {
			want[l.FrameOffset+16] = true
		}
	}
	last := lastLeaFrame(code, want)
	leas := map[int64]bool{}
	for off, found := 0, 0; off <= last && found < len(want); {
		inst, err := symtab.DecodeInst(code[off:])
		if err != nil || inst.Len == 0 {
			off++
			continue
		}
		if inst.Op == x86asm.LEA {
			if mem, ok := inst.Args[1].(x86asm.Mem); ok && mem.Base == x86asm.RBP && mem.Index == 0 && !leas[mem.Disp] {
				leas[mem.Disp] = true
				if want[mem.Disp] {
					found++
				}
			}
		}
		off += inst.Len
	}
	mem := inMemory{}
	for _, l := range locals {
		if l.Aggregate || leas[l.FrameOffset+16] {
			mem[l.Name] = append(mem[l.Name], l.Line)
		}
	}
	return mem
}

// lastLeaFrame returns the offset in code of the last byte 8D (LEA's
// opcode, after any prefixes: Intel SDM vol. 2, LEA) followed by a ModRM,
// and maybe a SIB, that take a displacement in want from a base of 5
// (%rbp without REX.B); -1 when there is none. The bytes of a lea of
// disp(%rbp) are there in that order, so decoding code past that offset
// finds no lea of a slot in want; where instructions start only the
// decoding knows.
func lastLeaFrame(code []byte, want map[int64]bool) int {
	if len(want) == 0 {
		return -1
	}
	for i := len(code) - 1; i >= 0; i-- {
		i = bytes.LastIndexByte(code[:i+1], 0x8d)
		if i < 0 {
			return -1
		}
		if leaFrameAt(code, i, want) {
			return i
		}
	}
	return -1
}

// leaFrameAt reports whether the byte 8D at code[i] is followed by the
// ModRM (and SIB) of a displacement in want from base 5 (lastLeaFrame).
func leaFrameAt(code []byte, i int, want map[int64]bool) bool {
	if i+1 >= len(code) {
		return false
	}
	// [Intel SDM vol. 2, 2.1.5, Tables 2-2 and 2-3] mod 01 takes a disp8,
	// mod 10 a disp32; r/m 100 means a SIB follows, whose base is 101.
	modrm := code[i+1]
	mod, rm := modrm>>6, modrm&7
	d := i + 2
	switch {
	case mod != 1 && mod != 2:
		return false
	case rm == 4:
		if d >= len(code) || code[d]&7 != 5 {
			return false
		}
		d++
	case rm != 5:
		return false
	}
	if mod == 1 {
		return d < len(code) && want[int64(int8(code[d]))]
	}
	return d+4 <= len(code) && want[int64(int32(binary.LittleEndian.Uint32(code[d:])))]
}
