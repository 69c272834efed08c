// Package relocate owns x86-64 relocation of displaced instructions: it turns
// one instruction into code that runs out of line, at another address, with
// the same effect, or says why that cannot be done safely.
//
// Two engines need it. Out-of-line execution (the xol engine, in monitor)
// leaves every int3 planted and runs the instruction it covers somewhere
// else: on a hit the monitor counts, moves the thread's PC to the site's
// slot in a scratch region and continues. The in-process engine (package
// breakpoint/jump's trampolines) displaces whole instructions from a site into a
// trampoline that counts the hit, and aims the trampoline's exits (the rel32
// jumps back to original code, Displaced.Exits) at the trampolines of the
// sites there.
//
// It is a package of its own because relocation is a trade apart from the
// site table: it knows the instruction encoding (Intel SDM vol. 2), not
// sites, counts or processes. It is pure, plain data in and plain data out:
// bytes and addresses in, a Displaced (the slot's code, where a thread
// inside it stands in the original, where it jumps back) or an *Error with
// the reason out, so every form is tested without a process. It depends on
// nothing in breakpoint; writing a slot goes through the one-method Memory
// interface, which breakpoint.Memory and the monitor's /proc/PID/mem
// satisfy. Choosing which instructions to displace, the counter updates
// around them and the scratch regions they run in belong to its callers.
//
// Files:
//
//	relocate.go  Relocate, Displaced, Form, Error and the reasons for
//	             refusing; copied instructions, their RIP-relative
//	             displacements rewritten
//	decode.go    Decode, with a second reading of prefixes and ModRM
//	             that refuses what the two disagree on
//	branches.go  direct jumps, branches and loops re-encoded as rel32;
//	             calls emulated (push the original return address, jmp)
//	emit.go      the emitter that writes a slot's code; Rel32
//
// The cases of testdata/relocate.txt (one instruction a line, with its
// expected slot code or reason) drive relocate_test.go.
package relocate
