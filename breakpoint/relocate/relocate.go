package relocate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

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

// ErrNotRelocatable is wrapped by every *Error: the instruction cannot run
// out of line safely, and its site keeps the classic cycle (restore,
// single-step, re-arm).
var ErrNotRelocatable = errors.New("instruction cannot run out of line")

// An Error says why the instruction at Addr cannot run out of line.
type Error struct {
	Addr   uint64 // runtime address of the instruction
	Bytes  []byte // the instruction's bytes, as far as they were decoded
	Reason string // one of the Reason* constants, possibly with a detail after ": "
}

func (e *Error) Error() string {
	return fmt.Sprintf("instruction at %#x (% x) cannot run out of line: %s; its site keeps the classic cycle", e.Addr, e.Bytes, e.Reason)
}

// Unwrap returns ErrNotRelocatable, so errors.Is(err, ErrNotRelocatable) holds.
func (e *Error) Unwrap() error { return ErrNotRelocatable }

// at sets the error's address.
func (e *Error) at(addr uint64) *Error {
	e.Addr = addr
	return e
}

// Reasons for refusing an instruction. An Error's Reason starts with one of
// these.
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

// Int3 is the breakpoint instruction (Intel SDM vol. 2, INT3: CC): what a
// site is planted with and a jump patch's dead bytes are filled with, and
// what a program may hold for its own debugger.
const Int3 = 0xCC

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

// A ResumePoint says that a thread at offset Off of a slot's code is in the
// same state as a thread at original address To.
type ResumePoint struct {
	Off uint8
	To  uint64
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

	// ResumePoints are the offsets of Code with an original equivalent,
	// in the order emitted (Resume reads them).
	ResumePoints []ResumePoint
	// Exits are the rel32 displacements of Code that aim at original
	// code: a trampoline's way back, which the monitor may aim at the
	// trampoline of the site there instead (breakpoint's Trampoline.Exits).
	Exits []Exit
	// Abs are the places of Code that hold an absolute address of the
	// original code (an emulated call's return address). Everything
	// else in Code depends on Addr and Slot only through Slot-Addr.
	Abs []AbsWord
}

// An AbsWord is an absolute address of the original code held in a
// slot's code: its low 32 bits at Lo, and its high 32 bits at Hi when
// Hi is not 0 (a 64-bit address written as two imm32), or, with Wide,
// all 64 bits at Lo.
type AbsWord struct {
	Lo, Hi int
	Wide   bool
}

// Shift adds d to the address w holds in code.
func (w AbsWord) Shift(code []byte, d uint64) {
	switch {
	case w.Wide:
		binary.LittleEndian.PutUint64(code[w.Lo:], binary.LittleEndian.Uint64(code[w.Lo:])+d)
	case w.Hi != 0:
		v := uint64(binary.LittleEndian.Uint32(code[w.Lo:])) | uint64(binary.LittleEndian.Uint32(code[w.Hi:]))<<32
		v += d
		binary.LittleEndian.PutUint32(code[w.Lo:], uint32(v))
		binary.LittleEndian.PutUint32(code[w.Hi:], uint32(v>>32))
	default:
		binary.LittleEndian.PutUint32(code[w.Lo:], binary.LittleEndian.Uint32(code[w.Lo:])+uint32(d))
	}
}

// An Exit is a rel32 displacement at offset Off of a slot's code whose
// jump goes to original address To.
type Exit struct {
	Off uint8
	To  uint64
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
	for _, r := range d.ResumePoints {
		if uint64(r.Off) == off {
			return r.To, true
		}
	}
	return 0, false
}

// Memory is where Write puts a slot's code: breakpoint.Memory, and the
// monitor's /proc/PID/mem, satisfy it.
type Memory interface {
	WriteMemory(addr uint64, buf []byte) (int, error)
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

// Measure returns the length of the instruction at the start of code, found
// at runtime address addr, and the form Relocate gives it, or Relocate's
// error: what a plan asks of an instruction (can it run out of line, and
// does it transfer control), without the slot code, whose buffers go back
// to be reused. Planning asks it of every instruction a patch would cover,
// tens of thousands in a large program.
func Measure(code []byte, addr uint64) (Form, int, error) {
	d, err := Relocate(code, addr, addr)
	if err != nil {
		return 0, 0, err
	}
	form, n := d.Form, d.Len
	displacedPool.Put(d)
	return form, n, nil
}

// Relocate returns the out-of-line form of the instruction code[:n] found at
// runtime address addr (code may be longer than the instruction; n is found by
// decoding), to be placed at slot. It returns a *Error wrapping
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
// decode.go's own reading of the prefixes and ModRM byte, and targets or
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
	inst, err := Decode(code)
	if err != nil {
		return nil, err.(*Error).at(addr)
	}
	raw := code[:inst.Len]
	if addr+uint64(inst.Len) < addr {
		return refused(addr, raw, ReasonAddressSpace)
	}
	lay, reason := scanLayout(raw)
	if reason != "" {
		return refused(addr, raw, reason)
	}
	rip, reason := checkRIP(raw, inst, lay)
	if reason != "" {
		return refused(addr, raw, reason)
	}
	if reason := refusal(inst, raw[lay.opcode]); reason != "" {
		return refused(addr, raw, reason)
	}

	switch inst.Op {
	case x86asm.RET:
		op := raw[lay.opcode]
		if lay.opmap != 0 || (op != 0xC3 && op != 0xC2) {
			return refused(addr, raw, ReasonDisagree)
		}
		return relocateCopy(raw, addr, slot, lay, true)
	case x86asm.JMP:
		return relocateJump(raw, inst, lay, addr, slot)
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE, x86asm.JL,
		x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JS:
		return relocateCond(raw, inst, lay, addr, slot)
	case x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.JRCXZ, x86asm.JECXZ, x86asm.JCXZ:
		return relocateLoop(raw, inst, lay, addr, slot)
	case x86asm.CALL:
		return relocateCall(raw, inst, lay, addr, slot)
	}

	if inst.PCRel != 0 && !rip {
		return refused(addr, raw, ReasonPCRelative+": "+inst.Op.String())
	}
	return relocateCopy(raw, addr, slot, lay, false)
}

// refusal returns why inst, whose opcode byte is op, must never run out of
// line whatever its operands, or "" if nothing about the operation itself
// forbids it. These are the instructions whose effect depends on the PC they
// trap or return at, or on the instruction after them (in a slot, the jmp
// back), so no re-encoding could make them behave as at their address.
func refusal(inst x86asm.Inst, op byte) string {
	switch inst.Op {
	case x86asm.INT:
		if op == Int3 {
			return ReasonInt3
		}
		v, _ := inst.Args[0].(x86asm.Imm)
		return fmt.Sprintf("%s: int %#x", ReasonTraps, uint8(v))
	case x86asm.ICEBP, x86asm.INTO, x86asm.UD0, x86asm.UD1, x86asm.UD2, x86asm.HLT:
		return ReasonTraps + ": " + opName(inst.Op)
	case x86asm.LCALL, x86asm.LJMP, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ,
		x86asm.SYSENTER, x86asm.SYSEXIT, x86asm.SYSRET:
		return ReasonFar + ": " + opName(inst.Op)
	case x86asm.XBEGIN:
		return ReasonXbegin
	case x86asm.POPF, x86asm.POPFD, x86asm.POPFQ:
		// Intel SDM vol. 3, 18.3.1.4: with TF newly set, the single-step
		// trap comes after the next instruction, which in the slot is the
		// jmp back: one instruction early, at another PC.
		return ReasonPopf
	case x86asm.MOV:
		if inst.Args[0] == x86asm.SS {
			// Intel SDM vol. 2, MOV: loading SS holds off interrupts and
			// debug traps until after the next instruction, which in the
			// slot is the jmp back.
			return ReasonMovSS
		}
	}
	return ""
}

// refused returns the *Error for the instruction raw at addr, with a
// copy of its bytes, so the error does not pin the caller's buffer.
func refused(addr uint64, raw []byte, reason string) (*Displaced, error) {
	return nil, &Error{Addr: addr, Bytes: append([]byte(nil), raw...), Reason: reason}
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
