package relocate

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// The direct branches are re-encoded rather than copied: their rel8 or rel32
// is relative to where they run, and from a slot the target is usually out of
// rel8 reach, so each becomes its rel32 form aimed at the original target.

// relocateJump relocates jmp: a direct one (EB, E9) becomes jmp rel32 to its
// target; one through a register or memory (FF /4) is copied as it is.
func relocateJump(raw []byte, inst x86asm.Inst, lay layout, addr, slot uint64) (*Displaced, error) {
	op := raw[lay.opcode]
	switch {
	case lay.opmap == 0 && (op == 0xEB || op == 0xE9):
		target, reason := directTarget(raw, inst, lay, addr)
		if reason != "" {
			return refused(addr, raw, reason)
		}
		e := newEmitter(addr, slot, inst.Len, FormJump)
		e.mark(addr)
		e.jmp(target)
		return e.done(raw)
	case lay.opmap == 0 && op == 0xFF && lay.reg() == 4:
		// Through a register or memory: nothing in the slot changed
		// what it reads, except a RIP-relative displacement.
		return relocateCopy(raw, addr, slot, lay, true)
	}
	return refused(addr, raw, ReasonDisagree)
}

// relocateCond relocates jcc (70-7F rel8, 0F 80-8F rel32) as jcc rel32 to
// the original target, then a jmp back for the branch not taken; the
// condition code is the opcode's low nibble in both encodings.
func relocateCond(raw []byte, inst x86asm.Inst, lay layout, addr, slot uint64) (*Displaced, error) {
	op := raw[lay.opcode]
	var cc byte
	switch {
	case lay.opmap == 0 && op >= 0x70 && op <= 0x7F:
		cc = op & 0x0F
	case lay.opmap == 1 && op >= 0x80 && op <= 0x8F:
		cc = op & 0x0F
	default:
		return refused(addr, raw, ReasonDisagree)
	}
	target, reason := directTarget(raw, inst, lay, addr)
	if reason != "" {
		return refused(addr, raw, reason)
	}
	next := addr + uint64(inst.Len)
	e := newEmitter(addr, slot, inst.Len, FormCond)
	e.mark(addr)
	e.bytes(0x0F, 0x80|cc) // Intel SDM vol. 2, Jcc: 0F 8x cd
	e.rel32(target)
	e.mark(next)
	e.jmp(next)
	return e.done(raw)
}

// relocateLoop relocates loop, loope, loopne and jrcxz (E0-E3), which have
// only a rel8 form: the instruction is kept, its displacement aimed at a jmp
// rel32 to the target, with a short jmp over it to a jmp back for the
// branch not taken.
func relocateLoop(raw []byte, inst x86asm.Inst, lay layout, addr, slot uint64) (*Displaced, error) {
	op := raw[lay.opcode]
	if lay.opmap != 0 || op < 0xE0 || op > 0xE3 || lay.opcode != inst.Len-2 {
		return refused(addr, raw, ReasonDisagree)
	}
	// The 67 prefix (count in ECX) must stay; 66 is refused by
	// directTarget.
	target, reason := directTarget(raw, inst, lay, addr)
	if reason != "" {
		return refused(addr, raw, reason)
	}
	next := addr + uint64(inst.Len)
	e := newEmitter(addr, slot, inst.Len, FormLoop)
	e.mark(addr)
	e.bytes(raw[:inst.Len-1]...)
	e.bytes(2) // taken: skip the short jmp, onto the jmp to the target
	e.mark(next)
	e.bytes(0xEB, 5) // not taken: skip the jmp to the target
	e.mark(target)
	e.jmp(target)
	e.mark(next)
	e.jmp(next)
	return e.done(raw)
}

// relocateCall emulates call: the original return address is pushed, so the
// callee returns to original code, then a jmp to the target. A direct call
// (E8) jumps rel32 to its target; an indirect one (FF /2) is left to
// relocateIndirectCall.
func relocateCall(raw []byte, inst x86asm.Inst, lay layout, addr, slot uint64) (*Displaced, error) {
	op := raw[lay.opcode]
	switch {
	case lay.opmap == 0 && op == 0xE8:
		target, reason := directTarget(raw, inst, lay, addr)
		if reason != "" {
			return refused(addr, raw, reason)
		}
		e := newEmitter(addr, slot, inst.Len, FormCall)
		e.pushReturn(addr + uint64(inst.Len))
		e.mark(target) // the call has happened: the thread is at the callee
		e.jmp(target)
		return e.done(raw)
	case lay.opmap == 0 && op == 0xFF && lay.reg() == 2:
		return relocateIndirectCall(raw, inst, lay, addr, slot)
	}
	return refused(addr, raw, ReasonDisagree)
}

// relocateIndirectCall emulates call r/m64 (FF /2): push the original return
// address, then the same operand as jmp r/m64 (FF /4). The operand is read
// after RSP went down by 8, so an RSP-based address gets 8 more displacement.
func relocateIndirectCall(raw []byte, inst x86asm.Inst, lay layout, addr, slot uint64) (*Displaced, error) {
	fail := func(reason string) (*Displaced, error) { return refused(addr, raw, reason) }
	for _, p := range raw[:lay.rexAt] {
		switch p {
		case 0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0xF2: // segments, notrack, bnd
		default:
			// 66 (a 16-bit target), 67 (addressing through ESP), lock and
			// rep change what the copy means.
			return fail(fmt.Sprintf("%s: %02x", ReasonBranchPrefix, p))
		}
	}
	jmp := append([]byte(nil), raw...)
	m := lay.modrm
	jmp[m] = jmp[m]&^0x38 | 4<<3 // reg field /2 (call) -> /4 (jmp)
	switch a := inst.Args[0].(type) {
	case x86asm.Reg:
		if a == x86asm.RSP || a == x86asm.ESP || a == x86asm.SP {
			return fail(ReasonCallRSP)
		}
	case x86asm.Mem:
		if a.Base == x86asm.RSP {
			var reason string
			if jmp, reason = addRSPDisp(jmp, lay, 8); reason != "" {
				return fail(reason)
			}
		}
	default:
		return fail(ReasonDisagree)
	}
	e := newEmitter(addr, slot, inst.Len, FormCall)
	e.pushReturn(addr + uint64(inst.Len))
	e.copyInst(jmp, lay) // no mark: about to jump, the target is not known here
	return e.done(raw)
}

// addRSPDisp returns the instruction raw, whose ModRM operand is based on RSP
// (a SIB byte with base 100 and no REX.B), with delta added to its
// displacement, growing the displacement field when it must.
func addRSPDisp(raw []byte, lay layout, delta int32) ([]byte, string) {
	m := lay.modrm
	mod := raw[m] >> 6
	if raw[m]&7 != 4 || m+1 >= len(raw) || raw[m+1]&7 != 4 || lay.rex&1 != 0 || mod == 3 {
		return nil, ReasonDisagree
	}
	d := m + 2 // the displacement follows the SIB byte
	var out []byte
	switch mod {
	case 0: // [rsp+index*s]: add a disp8
		out = append(out, raw[:m]...)
		out = append(out, raw[m]&^0xC0|0x40, raw[m+1], byte(delta))
		out = append(out, raw[d:]...)
	case 1:
		v := int32(int8(raw[d])) + delta
		if v == int32(int8(v)) {
			out = append([]byte(nil), raw...)
			out[d] = byte(v)
			break
		}
		out = append(out, raw[:m]...)
		out = append(out, raw[m]&^0xC0|0x80, raw[m+1])
		out = binary.LittleEndian.AppendUint32(out, uint32(v))
		out = append(out, raw[d+1:]...)
	case 2:
		v := int64(int32(binary.LittleEndian.Uint32(raw[d:]))) + int64(delta)
		if v != int64(int32(v)) {
			return nil, ReasonDisplacement
		}
		out = append([]byte(nil), raw...)
		binary.LittleEndian.PutUint32(out[d:], uint32(v))
	}
	return out, ""
}

// directTarget returns the absolute target of a direct branch (rel8 or rel32
// after its opcode), refusing prefixes that change what the branch means.
func directTarget(raw []byte, inst x86asm.Inst, lay layout, addr uint64) (uint64, string) {
	loop := lay.opmap == 0 && raw[lay.opcode] >= 0xE0 && raw[lay.opcode] <= 0xE3
	if lay.rex != 0 {
		return 0, fmt.Sprintf("%s: %02x", ReasonBranchPrefix, lay.rex)
	}
	for _, p := range raw[:lay.rexAt] {
		switch {
		case p == 0x2E || p == 0x3E: // branch hints (Intel SDM vol. 2, 2.1.1)
		case p == 0xF2 && !loop: // bnd: MPX is gone from Linux, and the copy keeps none
		case p == 0x67 && loop: // the counter is ECX; copied with the instruction
		default:
			// 66 truncates the target to 16 bits on AMD; REX and the
			// rest mean nothing here and are not worth the risk.
			return 0, fmt.Sprintf("%s: %02x", ReasonBranchPrefix, p)
		}
	}
	rel, ok := inst.Args[0].(x86asm.Rel)
	if !ok || inst.PCRel != inst.Len-inst.PCRelOff || (inst.PCRel != 1 && inst.PCRel != 4) ||
		inst.PCRelOff != lay.opcode+1 {
		return 0, ReasonDisagree
	}
	var enc int64
	if inst.PCRel == 1 {
		enc = int64(int8(raw[inst.PCRelOff]))
	} else {
		enc = int64(int32(binary.LittleEndian.Uint32(raw[inst.PCRelOff:])))
	}
	if enc != int64(rel) {
		return 0, ReasonDisagree
	}
	return addr + uint64(inst.Len) + uint64(int64(rel)), ""
}
