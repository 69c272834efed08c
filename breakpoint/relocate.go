package breakpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// Out-of-line execution (the xol engine) leaves every int3 planted and runs
// the instruction it covers somewhere else: on a hit the monitor counts, moves
// the thread's PC to the site's slot in a scratch region and continues. This
// file turns one original instruction into the code of its slot. It is pure:
// bytes in, bytes out, so every form is tested without a process.
//
// Nothing added to a slot may change what the program can observe, other
// than the program counter while the thread is inside the slot: the added
// instructions are jmp, mov to memory and lea, none of which writes the flags
// (Intel SDM vol. 2, JMP, MOV, LEA: "Flags Affected: None"), and no register
// other than RSP (and RIP) is ever changed.

// MaxSlot is the most bytes one relocated instruction needs in scratch: an
// emulated call through memory addressed off RSP (two stores and a lea, 21
// bytes, then the jmp through memory: at most 15 bytes, plus one for a
// displacement that grows from none to 8 bits, 37 in all). Callers lay slots
// out at 16-byte alignment.
const MaxSlot = 48

// ErrNotRelocatable is wrapped by every *RelocateError: the instruction cannot
// run out of line safely, and its site keeps the classic cycle (restore,
// single-step, re-arm).
var ErrNotRelocatable = errors.New("instruction cannot run out of line")

// A RelocateError says why the instruction at Addr cannot run out of line.
type RelocateError struct {
	Addr   uint64 // runtime address of the instruction
	Bytes  []byte // the instruction's bytes, as far as they were decoded
	Reason string // one of the Reason* constants, possibly with a detail after ": "
}

func (e *RelocateError) Error() string {
	return fmt.Sprintf("instruction at %#x (% x) cannot run out of line: %s; its site keeps the classic cycle", e.Addr, e.Bytes, e.Reason)
}

// Unwrap returns ErrNotRelocatable, so errors.Is(err, ErrNotRelocatable) holds.
func (e *RelocateError) Unwrap() error { return ErrNotRelocatable }

// Reasons for refusing an instruction. A RelocateError's Reason starts with
// one of these.
const (
	ReasonTruncated     = "truncated instruction"
	ReasonDecode        = "undecodable instruction"
	ReasonInt3          = "int3 (the program's own breakpoint)"
	ReasonTraps         = "traps by design"
	ReasonFar           = "far or privilege-changing control transfer"
	ReasonXbegin        = "xbegin (its abort address is relative to it)"
	ReasonBranchPrefix  = "unusual prefix on a branch"
	ReasonCallRSP       = "call through rsp"
	ReasonEIPRelative   = "eip-relative operand (address-size prefix)"
	ReasonDisagree      = "x86asm and the encoding disagree"
	ReasonPCRelative    = "unknown pc-relative operand"
	ReasonOutOfRange    = "beyond rel32 reach of the slot"
	ReasonPrefixes      = "malformed prefixes"
	ReasonOpcodeMap     = "unknown opcode map"
	ReasonDisplacement  = "rsp-relative displacement overflows"
	ReasonAddressSpace  = "instruction wraps around the address space"
	ReasonDecoderPanics = "decoder panicked"
	ReasonAmbiguous     = "decoded differently depending on the bytes after it"
	ReasonTooLong       = "slot code longer than MaxSlot"
	ReasonPopf          = "popf (a trap flag it sets would fire one instruction early)"
	ReasonMovSS         = "mov ss (its interrupt shadow would cover the jmp back)"
)

// opName returns the mnemonic in lower case, as in Intel syntax.
func opName(op x86asm.Op) string { return strings.ToLower(op.String()) }

// A Form says how an instruction was relocated.
type Form uint8

const (
	// FormCopy is an instruction copied (RIP-relative displacement
	// rewritten), then a jmp back to the next original instruction.
	FormCopy Form = iota
	// FormTransfer is an instruction that transfers control itself (ret,
	// jmp through a register or memory), copied with no jmp back.
	FormTransfer
	// FormJump is a direct jmp, re-encoded as jmp rel32 to its target.
	FormJump
	// FormCond is a jcc, re-encoded as jcc rel32 to its target and a jmp
	// back to the next original instruction.
	FormCond
	// FormLoop is loop, loope, loopne or jrcxz (rel8 only): the instruction
	// with its displacement aimed at two jmp rel32, one to the target and one
	// to the next original instruction.
	FormLoop
	// FormCall is an emulated call: the ORIGINAL return address is stored
	// below RSP and RSP lowered by lea, then a jmp to the target (rel32,
	// register or memory). The return address on the stack is the one the
	// program, its unwinder and its debugger expect; a CET shadow stack would
	// not see it (see Displaced).
	FormCall
)

var formNames = [...]string{"copy", "transfer", "jump", "cond", "loop", "call"}

// String returns the form's name.
func (f Form) String() string {
	if int(f) < len(formNames) {
		return formNames[f]
	}
	return fmt.Sprintf("form(%d)", uint8(f))
}

// A resumePoint says that a thread at offset off of a slot is in the same
// state as a thread at original address to.
type resumePoint struct {
	off uint8
	to  uint64
}

// A Displaced is an instruction relocated to run out of line at Slot, so that
// it behaves exactly as if it ran at Addr, then continues at the original next
// instruction (or wherever the instruction transfers control).
//
// The slot must stay mapped, unchanged, while any thread's PC is inside it,
// including threads blocked in a system call made by a relocated syscall
// (their PC is Slot+2). A FormCall slot stores the return address with plain
// stores: under a CET shadow stack (x86_Thread_features: shstk in
// /proc/PID/status) the callee's ret would fault, so such sites must keep the
// classic cycle.
//
// A signal delivered while a thread is in a slot saves the slot's PC in the
// signal frame, and the handler returns there: the slot must outlive every
// such handler, so a scratch region is best left mapped at detach (its code
// stays correct: every way out of a slot leads to original code). A fault in
// a slot (a Go nil check, a stack overflow) should be delivered with the PC
// moved to Resume's address first, as a handler that inspects or unwinds
// from the PC (Go's sigpanic, which throws on a PC outside Go code) expects
// the original.
type Displaced struct {
	Addr, Slot uint64 // runtime addresses of the original and of its copy
	Code       []byte // bytes to write at Slot, at most MaxSlot
	Len        int    // length of the original instruction
	Form       Form   // how it was relocated
	// RIPRelative reports that the instruction had a RIP-relative memory
	// operand whose displacement was rewritten.
	RIPRelative bool

	resume []resumePoint
}

// Resume maps a PC inside Code, at an instruction boundary of Code, to the
// original address a thread stopped there is equivalent to, for detach: Slot
// maps to Addr; the address right after the copied instruction (before the jmp
// back) maps to Addr+Len; in an emulated call, the second store and the lea
// map to Addr (the stores go below RSP, where the call itself would write,
// and RSP has not moved) and the jmp maps to the call's target when it is
// direct; in a loop, each jmp maps to where it goes. ok is false for other PCs, in the middle of a sequence whose
// state has no original equivalent (an emulated indirect call about to jump):
// the caller single-steps the thread out of the slot instead.
//
// A synchronous fault (SIGSEGV, SIGBUS, SIGFPE) in the slot is precise: the
// PC is at the faulting instruction and nothing of it has happened, so
// Resume gives the address to report the fault at. A thread whose PC is
// Slot+2 after a relocated syscall maps to Addr+2, where the kernel's
// restart of an interrupted call (PC -= 2) finds the original syscall.
func (d *Displaced) Resume(pc uint64) (uint64, bool) {
	if pc < d.Slot || pc-d.Slot >= uint64(len(d.Code)) {
		return 0, false
	}
	off := pc - d.Slot
	for _, r := range d.resume {
		if uint64(r.off) == off {
			return r.to, true
		}
	}
	return 0, false
}

// Write writes Code at Slot.
func (d *Displaced) Write(mem Memory) error {
	n, err := mem.WriteMemory(d.Slot, d.Code)
	if err != nil {
		return fmt.Errorf("writing the out-of-line copy of %#x at %#x: %w", d.Addr, d.Slot, err)
	}
	if n != len(d.Code) {
		return fmt.Errorf("writing the out-of-line copy of %#x at %#x: short write (%d of %d bytes)", d.Addr, d.Slot, n, len(d.Code))
	}
	return nil
}

// Relocate returns the out-of-line form of the instruction code[:n] found at
// runtime address addr (code may be longer than the instruction; n is found by
// decoding), to be placed at slot. It returns a *RelocateError wrapping
// ErrNotRelocatable, with the reason, when that cannot be done safely: the
// caller keeps the classic cycle for that site.
//
// Relocated: any instruction that does not transfer control (copied, a
// RIP-relative displacement rewritten, then a jmp back), endbr64/endbr32,
// syscall, jmp and jcc rel8/rel32, loop/loope/loopne/jrcxz, call rel32, call
// through a register or memory (emulated, pushing the original return
// address), ret, ret imm16, jmp through a register or memory, vzeroupper and
// vzeroall. Refused: int3, int n, int1, ud0/ud1/ud2, hlt, far and
// privilege-changing transfers, xbegin, popf, mov ss, branches with
// operand-size, REX or other unusual prefixes, call rsp, call with a 67
// prefix, eip-relative operands, anything the decoder does not know, decodes
// differently depending on the bytes that follow, or reads differently from
// this file's own reading of the prefixes and ModRM byte, and targets or
// operands beyond ±2 GiB of the slot.
func Relocate(code []byte, addr, slot uint64) (*Displaced, error) {
	if symtab.IsENDBR(code) {
		// Intel SDM vol. 2, ENDBR64: a NOP unless indirect-branch tracking is
		// on, which Linux does not enable for user space. x86asm cannot
		// decode it.
		return relocateCopy(code[:4], addr, slot, layout{}, false)
	}
	if symtab.IsVZERO(code) {
		// x86asm v0.33 gives VZEROUPPER and VZEROALL a ModRM byte they do
		// not have (Intel SDM vol. 2, VZEROUPPER: VEX.128.0F.WIG 77).
		return relocateCopy(code[:3], addr, slot, layout{}, false)
	}
	inst, err := decode(code)
	if err != nil {
		return nil, err.(*RelocateError).at(addr)
	}
	raw := code[:inst.Len]
	fail := func(reason string) (*Displaced, error) {
		return nil, &RelocateError{Addr: addr, Bytes: append([]byte(nil), raw...), Reason: reason}
	}
	if addr+uint64(inst.Len) < addr {
		return fail(ReasonAddressSpace)
	}
	lay, reason := scanLayout(raw)
	if reason != "" {
		return fail(reason)
	}
	rip, reason := checkRIP(raw, inst, lay)
	if reason != "" {
		return fail(reason)
	}
	next := addr + uint64(inst.Len)
	op := raw[lay.opcode]

	switch inst.Op {
	case x86asm.INT:
		if op == Int3 {
			return fail(ReasonInt3)
		}
		v, _ := inst.Args[0].(x86asm.Imm)
		return fail(fmt.Sprintf("%s: int %#x", ReasonTraps, uint8(v)))
	case x86asm.ICEBP, x86asm.INTO, x86asm.UD0, x86asm.UD1, x86asm.UD2, x86asm.HLT:
		return fail(ReasonTraps + ": " + opName(inst.Op))
	case x86asm.LCALL, x86asm.LJMP, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ,
		x86asm.SYSENTER, x86asm.SYSEXIT, x86asm.SYSRET:
		return fail(ReasonFar + ": " + opName(inst.Op))
	case x86asm.XBEGIN:
		return fail(ReasonXbegin)
	case x86asm.POPF, x86asm.POPFD, x86asm.POPFQ:
		// Intel SDM vol. 3, 18.3.1.4: with TF newly set, the single-step
		// trap comes after the next instruction, which in the slot is the
		// jmp back: one instruction early, at another PC.
		return fail(ReasonPopf)
	case x86asm.MOV:
		if inst.Args[0] == x86asm.SS {
			// Intel SDM vol. 2, MOV: loading SS holds off interrupts and
			// debug traps until after the next instruction, which in the
			// slot is the jmp back.
			return fail(ReasonMovSS)
		}

	case x86asm.RET:
		if lay.opmap != 0 || (op != 0xC3 && op != 0xC2) {
			return fail(ReasonDisagree)
		}
		return relocateCopy(raw, addr, slot, lay, true)

	case x86asm.JMP:
		switch {
		case lay.opmap == 0 && (op == 0xEB || op == 0xE9):
			target, reason := directTarget(raw, inst, lay, addr)
			if reason != "" {
				return fail(reason)
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
		return fail(ReasonDisagree)

	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE, x86asm.JL,
		x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JS:
		var cc byte
		switch {
		case lay.opmap == 0 && op >= 0x70 && op <= 0x7F:
			cc = op & 0x0F
		case lay.opmap == 1 && op >= 0x80 && op <= 0x8F:
			cc = op & 0x0F
		default:
			return fail(ReasonDisagree)
		}
		target, reason := directTarget(raw, inst, lay, addr)
		if reason != "" {
			return fail(reason)
		}
		e := newEmitter(addr, slot, inst.Len, FormCond)
		e.mark(addr)
		e.bytes(0x0F, 0x80|cc) // Intel SDM vol. 2, Jcc: 0F 8x cd
		e.rel32(target)
		e.mark(next)
		e.jmp(next)
		return e.done(raw)

	case x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.JRCXZ, x86asm.JECXZ, x86asm.JCXZ:
		if lay.opmap != 0 || op < 0xE0 || op > 0xE3 || lay.opcode != inst.Len-2 {
			return fail(ReasonDisagree)
		}
		// The 67 prefix (count in ECX) must stay; 66 is refused by
		// directTarget.
		target, reason := directTarget(raw, inst, lay, addr)
		if reason != "" {
			return fail(reason)
		}
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

	case x86asm.CALL:
		switch {
		case lay.opmap == 0 && op == 0xE8:
			target, reason := directTarget(raw, inst, lay, addr)
			if reason != "" {
				return fail(reason)
			}
			e := newEmitter(addr, slot, inst.Len, FormCall)
			e.pushReturn(next)
			e.mark(target) // the call has happened: the thread is at the callee
			e.jmp(target)
			return e.done(raw)
		case lay.opmap == 0 && op == 0xFF && lay.reg() == 2:
			return relocateIndirectCall(raw, inst, lay, addr, slot)
		}
		return fail(ReasonDisagree)
	}

	if inst.PCRel != 0 && !rip {
		return fail(ReasonPCRelative + ": " + inst.Op.String())
	}
	return relocateCopy(raw, addr, slot, lay, false)
}

// relocateCopy copies the instruction raw, rewriting a RIP-relative
// displacement, and unless transfer, jumps back to the next original
// instruction.
func relocateCopy(raw []byte, addr, slot uint64, lay layout, transfer bool) (*Displaced, error) {
	form := FormCopy
	if transfer {
		form = FormTransfer
	}
	e := newEmitter(addr, slot, len(raw), form)
	e.mark(addr)
	e.copyInst(raw, lay)
	if !transfer {
		next := addr + uint64(len(raw))
		e.mark(next)
		e.jmp(next)
	}
	return e.done(raw)
}

// relocateIndirectCall emulates call r/m64 (FF /2): push the original return
// address, then the same operand as jmp r/m64 (FF /4). The operand is read
// after RSP went down by 8, so an RSP-based address gets 8 more displacement.
func relocateIndirectCall(raw []byte, inst x86asm.Inst, lay layout, addr, slot uint64) (*Displaced, error) {
	fail := func(reason string) (*Displaced, error) {
		return nil, &RelocateError{Addr: addr, Bytes: append([]byte(nil), raw...), Reason: reason}
	}
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

// An emitter builds a slot's code, recording the first error (a target out
// of reach) and checking it once at the end.
type emitter struct {
	d   *Displaced
	err string
}

func newEmitter(addr, slot uint64, n int, form Form) *emitter {
	return &emitter{d: &Displaced{Addr: addr, Slot: slot, Len: n, Form: form, Code: make([]byte, 0, MaxSlot)}}
}

// pc returns the runtime address of the next byte emitted.
func (e *emitter) pc() uint64 { return e.d.Slot + uint64(len(e.d.Code)) }

func (e *emitter) bytes(b ...byte) { e.d.Code = append(e.d.Code, b...) }

// mark records that a thread at the current position is equivalent to one at
// original address to.
func (e *emitter) mark(to uint64) {
	e.d.resume = append(e.d.resume, resumePoint{off: uint8(len(e.d.Code)), to: to})
}

// rel32 emits the displacement of an instruction that ends right after it.
func (e *emitter) rel32(target uint64) {
	v, ok := rel32(target, e.pc()+4)
	if !ok && e.err == "" {
		e.err = fmt.Sprintf("%s: target %#x from %#x", ReasonOutOfRange, target, e.pc()+4)
	}
	e.d.Code = binary.LittleEndian.AppendUint32(e.d.Code, uint32(v))
}

// jmp emits jmp rel32 (Intel SDM vol. 2, JMP: E9 cd).
func (e *emitter) jmp(target uint64) {
	e.bytes(0xE9)
	e.rel32(target)
}

// pushReturn stores ret below RSP and then lowers RSP over it, the push half
// of a call, without touching the flags. The stores come first, so a fault in
// them (a stack overflow) leaves RSP as it was and the thread equivalent to
// one at the call; the bytes below RSP are dead at a call, which overwrites
// them itself, and the kernel leaves the 128-byte red zone alone when it
// builds a signal frame (x86-64 psABI 3.2.2).
func (e *emitter) pushReturn(ret uint64) {
	e.mark(e.d.Addr)
	e.bytes(0xC7, 0x44, 0x24, 0xF8) // mov dword [rsp-8], imm32
	e.d.Code = binary.LittleEndian.AppendUint32(e.d.Code, uint32(ret))
	e.mark(e.d.Addr)
	e.bytes(0xC7, 0x44, 0x24, 0xFC) // mov dword [rsp-4], imm32
	e.d.Code = binary.LittleEndian.AppendUint32(e.d.Code, uint32(ret>>32))
	e.mark(e.d.Addr)
	e.bytes(0x48, 0x8D, 0x64, 0x24, 0xF8) // lea rsp, [rsp-8]
}

// copyInst emits the instruction raw (laid out as lay), with a RIP-relative
// displacement rewritten so that its effective address is the one it had at
// the original address. The displacement is relative to the end of the
// instruction, immediates included, so it is rewritten where the ModRM byte
// says it is, not at the end.
func (e *emitter) copyInst(raw []byte, lay layout) {
	at := len(e.d.Code)
	start := e.pc()
	e.bytes(raw...)
	if !lay.rip {
		return
	}
	e.d.RIPRelative = true
	d := lay.modrm + 1
	disp := int64(int32(binary.LittleEndian.Uint32(raw[d:])))
	ea := e.d.Addr + uint64(e.d.Len) + uint64(disp)
	v, ok := rel32(ea, start+uint64(len(raw)))
	if !ok && e.err == "" {
		e.err = fmt.Sprintf("%s: rip-relative operand %#x from %#x", ReasonOutOfRange, ea, start+uint64(len(raw)))
	}
	binary.LittleEndian.PutUint32(e.d.Code[at+d:], uint32(v))
}

func (e *emitter) done(raw []byte) (*Displaced, error) {
	if e.err != "" {
		return nil, &RelocateError{Addr: e.d.Addr, Bytes: append([]byte(nil), raw...), Reason: e.err}
	}
	if len(e.d.Code) > MaxSlot {
		// Not reached: MaxSlot bounds every form. Refusing keeps a bug
		// here from overwriting the next slot.
		return nil, &RelocateError{Addr: e.d.Addr, Bytes: append([]byte(nil), raw...), Reason: fmt.Sprintf("%s: %d bytes", ReasonTooLong, len(e.d.Code))}
	}
	return e.d, nil
}

// rel32 returns target-end as a 32-bit displacement, and whether it fits.
func rel32(target, end uint64) (int32, bool) {
	v := int64(target - end)
	return int32(v), v == int64(int32(v))
}

// decode decodes one 64-bit instruction, turning x86asm's failures (and a
// panic, should it ever have one) into a *RelocateError without an address.
func decode(code []byte) (inst x86asm.Inst, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &RelocateError{Bytes: prefix(code, 15), Reason: fmt.Sprintf("%s: %v", ReasonDecoderPanics, r)}
		}
	}()
	if len(code) == 0 {
		return inst, &RelocateError{Reason: ReasonTruncated}
	}
	inst, derr := x86asm.Decode(code, 64)
	if derr != nil || inst.Op == 0 || inst.Len <= 0 || inst.Len > len(code) {
		// x86asm reports a cut-off instruction in several ways; padding
		// it out tells a truncated instruction from an unknown one.
		if len(code) < 15 {
			pad := make([]byte, 15)
			copy(pad, code)
			if p, err := x86asm.Decode(pad, 64); err == nil && p.Op != 0 && p.Len > len(code) {
				return inst, &RelocateError{Bytes: prefix(code, 15), Reason: ReasonTruncated}
			}
		}
		return inst, &RelocateError{Bytes: prefix(code, 15), Reason: ReasonDecode}
	}
	// The CPU decodes an instruction from its own bytes. x86asm's AVX
	// decoder looks past them (it picks among candidates by the byte after
	// the opcode even where there is no ModRM), so an instruction whose
	// length or operation changes with what follows it, as it will in the
	// slot, is not trusted.
	var buf [2 * 15]byte
	for _, fill := range [...]byte{0x00, 0xFF, 0xE9, 0x05} {
		n := copy(buf[:], code[:inst.Len])
		for i := n; i < len(buf); i++ {
			buf[i] = fill
		}
		again, err := x86asm.Decode(buf[:], 64)
		if err != nil || again.Op != inst.Op || again.Len != inst.Len {
			return inst, &RelocateError{Bytes: prefix(code, inst.Len), Reason: ReasonAmbiguous}
		}
	}
	return inst, nil
}

func prefix(b []byte, n int) []byte {
	if len(b) > n {
		b = b[:n]
	}
	return append([]byte(nil), b...)
}

// at sets the error's address.
func (e *RelocateError) at(addr uint64) *RelocateError {
	e.Addr = addr
	return e
}

// A layout is the shape of an instruction's encoding as this file reads it,
// independently of x86asm: where the prefixes end, which opcode map, and
// where the ModRM byte is. It is used to check x86asm's account of
// RIP-relative operands (its AVX decoder reports [rip+disp32] as an absolute
// [disp32]) and to find the bytes to rewrite.
type layout struct {
	rexAt  int  // index just past the legacy prefixes (the REX byte, if any)
	rex    byte // the REX prefix, 0 if none
	opcode int  // index of the opcode byte within its map
	opmap  int  // 0 one-byte, 1 0F, 2 0F38, 3 0F3A
	vex    bool // VEX or EVEX encoded
	modrm  int  // index of the ModRM byte, -1 if none
	rip    bool // ModRM mod=00 rm=101: [rip+disp32] in 64-bit mode

	modrmByte byte
}

// reg returns the ModRM reg field (the /digit of group opcodes), or -1.
func (l layout) reg() int {
	if l.modrm < 0 {
		return -1
	}
	return int(l.modrmByte >> 3 & 7)
}

// scanLayout reads raw's prefixes, opcode and ModRM position (Intel SDM vol.
// 2, 2.1 "Instruction Format", 2.2.1 REX, 2.3 VEX, 2.7 EVEX).
func scanLayout(raw []byte) (layout, string) {
	l := layout{modrm: -1}
	i := 0
	for ; i < len(raw); i++ {
		switch raw[i] {
		case 0xF0, 0xF2, 0xF3, 0x2E, 0x36, 0x3E, 0x26, 0x64, 0x65, 0x66, 0x67:
			continue
		}
		break
	}
	l.rexAt = i
	if i < len(raw) && raw[i]&0xF0 == 0x40 {
		l.rex = raw[i]
		i++
		// A REX not right before the opcode is ignored by the CPU;
		// x86asm's and our reading would have to agree on that.
		if i < len(raw) && (raw[i]&0xF0 == 0x40 || isLegacyPrefix(raw[i])) {
			return l, ReasonPrefixes
		}
	}
	if i >= len(raw) {
		return l, ReasonTruncated
	}
	hasModRM := false
	switch b := raw[i]; {
	case b == 0xC4 || b == 0xC5 || b == 0x62:
		// In 64-bit mode these are always VEX/EVEX (LES, LDS and BOUND
		// are invalid there). A REX or 66/F2/F3/F0 before them is #UD.
		if l.rex != 0 {
			return l, ReasonPrefixes
		}
		n := map[byte]int{0xC5: 2, 0xC4: 3, 0x62: 4}[b]
		if i+n >= len(raw) {
			return l, ReasonTruncated
		}
		switch b {
		case 0xC5:
			l.opmap = 1
		case 0xC4:
			l.opmap = int(raw[i+1] & 0x1F)
		case 0x62:
			l.opmap = int(raw[i+1] & 0x07)
		}
		if l.opmap < 1 || l.opmap > 3 {
			return l, ReasonOpcodeMap
		}
		l.vex = true
		i += n
		l.opcode = i
		// VZEROUPPER and VZEROALL (VEX 0F 77) are the only VEX
		// instructions without ModRM.
		hasModRM = !(l.opmap == 1 && raw[i] == 0x77 && b != 0x62)
	case b == 0x0F:
		if i+1 >= len(raw) {
			return l, ReasonTruncated
		}
		switch raw[i+1] {
		case 0x38:
			l.opmap, l.opcode, hasModRM = 2, i+2, true
		case 0x3A:
			l.opmap, l.opcode, hasModRM = 3, i+2, true
		default:
			l.opmap, l.opcode = 1, i+1
			hasModRM = modrm0F[raw[i+1]>>4]&(1<<(raw[i+1]&15)) != 0
		}
	default:
		l.opcode = i
		hasModRM = modrm1[b>>4]&(1<<(b&15)) != 0
	}
	if l.opcode >= len(raw) {
		return l, ReasonTruncated
	}
	if hasModRM {
		l.modrm = l.opcode + 1
		if l.modrm >= len(raw) {
			return l, ReasonTruncated
		}
		l.modrmByte = raw[l.modrm]
		l.rip = raw[l.modrm]>>6 == 0 && raw[l.modrm]&7 == 5
		if l.rip && l.modrm+5 > len(raw) {
			return l, ReasonTruncated
		}
	}
	// The decoder's length must cover what the layout says is there: the
	// opcode, and the ModRM byte with its SIB and displacement.
	min := l.opcode + 1
	if hasModRM {
		mod, rm := raw[l.modrm]>>6, raw[l.modrm]&7
		min = l.modrm + 1
		if mod != 3 && rm == 4 {
			if min >= len(raw) {
				return l, ReasonDisagree
			}
			if mod == 0 && raw[min]&7 == 5 {
				min += 4 // SIB with no base: disp32
			}
			min++
		}
		switch {
		case mod == 1:
			min++
		case mod == 2, mod == 0 && rm == 5:
			min += 4
		}
	} else if l.vex && len(raw) != min {
		return l, ReasonDisagree // VEX without ModRM has no operands
	}
	if len(raw) < min {
		return l, ReasonDisagree
	}
	return l, ""
}

func isLegacyPrefix(b byte) bool {
	switch b {
	case 0xF0, 0xF2, 0xF3, 0x2E, 0x36, 0x3E, 0x26, 0x64, 0x65, 0x66, 0x67:
		return true
	}
	return false
}

// checkRIP compares x86asm's account of a RIP-relative operand with the
// layout's and reports whether there is one. Any disagreement refuses the
// instruction: copying it with a stale displacement would silently read or
// write the wrong memory.
func checkRIP(raw []byte, inst x86asm.Inst, l layout) (bool, string) {
	var ripArg, eipArg, absArg bool
	var disp int64
	if l.rip {
		disp = int64(int32(binary.LittleEndian.Uint32(raw[l.modrm+1:])))
	}
	for _, a := range inst.Args {
		m, ok := a.(x86asm.Mem)
		if !ok {
			continue
		}
		switch {
		case m.Base == x86asm.RIP:
			ripArg = true
		case m.Base == x86asm.EIP:
			eipArg = true
		case m.Base == 0 && m.Index == 0 && l.rip && m.Disp == disp:
			absArg = true
		}
	}
	if eipArg {
		return false, ReasonEIPRelative
	}
	if !l.rip {
		if ripArg {
			return false, ReasonDisagree
		}
		return false, ""
	}
	for _, p := range raw[:l.rexAt] {
		if p == 0x67 {
			return false, ReasonEIPRelative
		}
	}
	switch {
	case ripArg && inst.PCRel == 4 && inst.PCRelOff == l.modrm+1:
		return true, ""
	case l.vex && absArg && inst.PCRel == 0:
		// x86asm v0.33's AVX decoder reads [rip+disp32] as [disp32].
		return true, ""
	}
	return false, ReasonDisagree
}

// modrm1 and modrm0F have bit b of word h set when opcode h<<4|b of the
// one-byte map or of the 0F map takes a ModRM byte (Intel SDM vol. 2,
// appendix A, opcode maps; 64-bit mode).
var modrm1 = [16]uint16{
	0x0: 0x0F0F, // ALU r/m forms 00-03, 08-0B
	0x1: 0x0F0F,
	0x2: 0x0F0F,
	0x3: 0x0F0F,
	0x6: 1<<3 | 1<<9 | 1<<11, // movsxd, imul r,r/m,imm32, imul r,r/m,imm8
	0x8: 0xFFFF,              // group 1, test, xchg, mov, lea, pop r/m
	0xC: 1<<0 | 1<<1 | 1<<6 | 1<<7,
	0xD: 0xFF0F, // shifts D0-D3, x87 D8-DF
	0xF: 1<<6 | 1<<7 | 1<<14 | 1<<15,
}

var modrm0F = [16]uint16{
	0x0: 0x0F | 1<<0xD | 1<<0xF, // groups 6/7, lar, lsl, prefetch, 3DNow!
	0x1: 0xFFFF,                 // SSE moves, hint nops, endbr
	0x2: 0xFF0F,                 // mov cr/dr, SSE
	0x4: 0xFFFF,                 // cmovcc
	0x5: 0xFFFF,
	0x6: 0xFFFF,
	0x7: 0xFFFF &^ (1 << 7), // all but emms
	0x9: 0xFFFF,             // setcc
	0xA: 1<<3 | 1<<4 | 1<<5 | 1<<0xB | 1<<0xC | 1<<0xD | 1<<0xE | 1<<0xF,
	0xB: 0xFFFF,
	0xC: 0x00FF, // xadd, cmpxchg, SSE, group 9; not bswap
	0xD: 0xFFFF,
	0xE: 0xFFFF,
	0xF: 0xFFFF,
}
