package jump

import (
	"github.com/patchprof/patchprof/breakpoint/relocate"
	"golang.org/x/arch/x86/x86asm"
)

// A gate is a trampoline that stops its thread for the monitor instead of
// counting: it sends the thread SIGSTOP, then runs the displaced
// instructions as any trampoline does. It serves a site the monitor must
// see each time it runs (the dynamic linker's notification point) in a
// process whose system calls the monitor does not follow: an int3 there
// would be a forced SIGTRAP, which the kernel turns into SIG_DFL and
// unblocks when the program ignores or blocks SIGTRAP (kernel/signal.c,
// force_sig_info_to_task), a change only the system-call stops let the
// monitor undo. SIGSTOP sent with tgkill is not forced: it can be neither
// blocked nor ignored nor caught, so the program's signal state is never
// touched, and a tracee reports it as a signal-delivery-stop, where the
// monitor does its work and suppresses it (ptrace(2), "Signal-delivery-
// stop"). The gate is
//
//	lea -128(%rsp), %rsp    step over the red zone
//	push %rax, %rdi, %rsi, %rdx, %rcx, %r11
//	getpid; gettid; tgkill(pid, tid, SIGSTOP)    (rcx, r11: syscall's)
//	pop %r11, %rcx, %rdx, %rsi, %rdi, %rax    <- GateStop: the stop's PC
//	lea 128(%rsp), %rsp
//
// No instruction of it writes the arithmetic flags (syscall keeps them in
// %r11, which sysret puts back: Intel SDM vol. 2, SYSCALL, SYSRET).
var gateCode = []byte{
	0x48, 0x8d, 0x64, 0x24, 0x80, // lea -128(%rsp), %rsp
	0x50, 0x57, 0x56, 0x52, 0x51, 0x41, 0x53, // push rax rdi rsi rdx rcx r11
	0xb8, 39, 0, 0, 0, 0x0f, 0x05, // mov $SYS_getpid, %eax; syscall
	0x89, 0xc7, // mov %eax, %edi
	0xb8, 186, 0, 0, 0, 0x0f, 0x05, // mov $SYS_gettid, %eax; syscall
	0x89, 0xc6, // mov %eax, %esi
	0xba, 19, 0, 0, 0, // mov $SIGSTOP, %edx
	0xb8, 234, 0, 0, 0, 0x0f, 0x05, // mov $SYS_tgkill, %eax; syscall
	0x41, 0x5b, 0x59, 0x5a, 0x5e, 0x5f, 0x58, // pop r11 rcx rdx rsi rdi rax
	0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0, // lea 128(%rsp), %rsp
}

// gateStopOff is the offset in gateCode just past the tgkill: the PC of
// the thread's SIGSTOP stop.
const gateStopOff = 0x2a

// gateSaved are the registers the gate pushes, in push order.
var gateSaved = []x86asm.Reg{x86asm.RAX, x86asm.RDI, x86asm.RSI, x86asm.RDX, x86asm.RCX, x86asm.R11}

// gateRewinds are the Rewinds at the gate's instructions after its first,
// by offset: the registers pushed so far (the last pushed at 0(%rsp)) and
// how far below the site's the stack pointer is.
var gateRewinds = func() map[int]Rewind {
	pushed := func(n int) Rewind {
		rw := Rewind{SP: redZone + 8*uint64(n)}
		for k := n - 1; k >= 0; k-- {
			rw.Saved = append(rw.Saved, gateSaved[k])
		}
		return rw
	}
	m := map[int]Rewind{5: pushed(0), 6: pushed(1), 7: pushed(2), 8: pushed(3), 9: pushed(4), 0xa: pushed(5)}
	for _, off := range []int{0xc, 0x11, 0x13, 0x15, 0x1a, 0x1c, 0x1e, 0x23, 0x28, gateStopOff} {
		m[off] = pushed(6)
	}
	for k, off := range []int{0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31} {
		m[off] = pushed(5 - k)
	}
	return m
}()

// IsGate reports whether tr is a gate, which counts nothing.
func (tr *Trampoline) IsGate() bool { return tr.gate }

// GateStop returns the PC of a thread stopped by the gate's SIGSTOP, 0 if
// tr is no gate.
func (tr *Trampoline) GateStop() uint64 {
	if !tr.gate {
		return 0
	}
	return tr.At + gateStopOff
}

// GateFinish says how a thread at pc, past the gate's tgkill, goes on as
// if it had run the rest of the gate: its registers put back as Rewind
// says, and its PC at resume, the first displaced instruction.
func (tr *Trampoline) GateFinish(pc uint64) (rw Rewind, resume uint64, ok bool) {
	if !tr.gate || pc < tr.At+gateStopOff || len(tr.starts) == 0 {
		return Rewind{}, 0, false
	}
	if rw, ok = gateRewinds[int(pc-tr.At)]; !ok {
		return Rewind{}, 0, false
	}
	return rw, tr.At + uint64(tr.starts[0]), true
}

// PlanGate plans a gate at addr, whose original code (from addr on) is
// code; room is how many bytes from addr belong to its function and the
// padding after it (to the next function), which the patch may cover.
// Instructions are displaced until JmpLen bytes are covered; one that
// transfers control (a ret, a jmp) may end them early when the padding
// after it reaches JmpLen: the patch then covers padding no code runs
// (Site.Dead). It reports false when the site cannot take a gate.
func PlanGate(code []byte, addr, room uint64) (Site, bool) {
	if room < JmpLen {
		return Site{}, false
	}
	var js Site
	off := 0
	for off < JmpLen {
		form, n, err := relocate.Measure(code[off:], addr+uint64(off))
		if err != nil || (form != relocate.FormCopy && form != relocate.FormTransfer) {
			return Site{}, false
		}
		js.Insns = append(js.Insns, n)
		off += n
		if form == relocate.FormTransfer && off < JmpLen {
			js.Dead = JmpLen - off
			off = JmpLen
		}
	}
	if uint64(off) > room {
		return Site{}, false
	}
	js.Len, js.Gate = off, true
	return js, true
}
